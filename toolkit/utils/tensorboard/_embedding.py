"""Projector files for ``add_embedding``: tensors.tsv, metadata.tsv, sprite.png and projector_config.pbtxt."""

from __future__ import annotations

import io
import math
import os

import numpy as np
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._convert import make_grid, make_np


def make_tsv(metadata, save_path: str, metadata_header=None) -> None:
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode())


def make_sprite(label_img, save_path: str) -> None:
    """All label images tiled into one square sprite, as the projector expects."""
    from PIL import Image  # optional: PIL

    imgs = make_np(label_img)
    nrow = math.ceil(imgs.shape[0] ** 0.5)
    chw = make_grid(imgs, ncols=nrow)
    square = np.zeros((chw.shape[2], chw.shape[2], 3))
    hwc = chw.transpose(1, 2, 0)
    square[:hwc.shape[0], :, :] = hwc
    im = Image.fromarray(np.uint8((square * 255).clip(0, 255)))
    with io.BytesIO() as buf:
        im.save(buf, format="PNG")
        data = buf.getvalue()
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(data)


def get_embedding_info(metadata, label_img, subdir: str, global_step, tag: str) -> EmbeddingInfo:
    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = subdir + "/tensors.tsv"
    if metadata is not None:
        info.metadata_path = subdir + "/metadata.tsv"
    if label_img is not None:
        info.sprite.image_path = subdir + "/sprite.png"
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info


def write_pbtxt(save_path: str, contents: str) -> None:
    with open(os.path.join(save_path, "projector_config.pbtxt"), "wb") as f:
        f.write(contents.encode())


def make_mat(mat: np.ndarray, save_path: str) -> None:
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(v.item()) for v in row) + "\n").encode())
