"""``Summary`` protobufs for each kind of data, in the exact shapes (tags, plugin names, fields) PyTorch writes."""

from __future__ import annotations

import io
import json
import logging
import wave

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.mesh import metadata as mesh_metadata
from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ._convert import convert_to_HWC, make_np

logger = logging.getLogger(__name__)


def scalar(name: str, tensor, collections=None, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One scalar: ``simple_value`` (old style) or a ``scalars``-plugin tensor (new style)."""
    if isinstance(tensor, (int, float)) and not isinstance(tensor, bool):
        value = float(tensor)
    else:
        arr = make_np(tensor).squeeze()
        if arr.ndim != 0:
            raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {arr.size} "
                                 f"and {arr.ndim} dimensions.")
        value = float(arr)
    if new_style:
        if double_precision:
            proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
        else:
            proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=smd)])
    return Summary(value=[Summary.Value(tag=name, simple_value=value)])


_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val"), "float32": ("DT_FLOAT", "float_val"), "float64": ("DT_DOUBLE", "double_val"),
    "int8": ("DT_INT8", "int_val"), "uint8": ("DT_UINT8", "uint32_val"), "int16": ("DT_INT16", "int_val"),
    "int32": ("DT_INT32", "int_val"), "int64": ("DT_INT64", "int64_val"), "bool": ("DT_BOOL", "bool_val"),
    "complex64": ("DT_COMPLEX64", "scomplex_val"), "complex128": ("DT_COMPLEX128", "dcomplex_val"),
}


def tensor_proto(tag: str, tensor) -> Summary:
    """The whole tensor, for the ``tensor`` plugin."""
    arr = make_np(tensor)
    if arr.nbytes >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if arr.dtype.name not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {arr.dtype}")
    dtype, field = _TENSOR_TYPES[arr.dtype.name]
    flat = arr.reshape(-1)
    if arr.dtype == np.float16:
        values = flat.view(np.uint16).astype(np.int64).tolist()
    elif arr.dtype.kind == "c":
        values = np.stack([flat.real, flat.imag], -1).reshape(-1).tolist()
    else:
        values = flat.tolist()
    proto = TensorProto(dtype=dtype, tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in arr.shape]),
                        **{field: values})
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts) -> Summary:  # noqa: A002
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name: str, values, bins, max_bins=None) -> Summary:
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values).astype(float), bins, max_bins))])


def make_histogram(values: np.ndarray, bins, max_bins=None) -> HistogramProto:
    """Bucket ``values`` as TensorFlow's histogram.cc does: empty buckets trimmed from both ends, one kept before."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        sub = num_bins // max_bins
        rem = num_bins % sub
        if rem != 0:
            counts = np.pad(counts, pad_width=[[0, sub - rem]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, sub).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:sub]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def _scale_factor(arr: np.ndarray) -> int:
    return 1 if arr.dtype == np.uint8 else 255


def image(tag: str, tensor, rescale=1, dataformats: str = "NCHW") -> Summary:
    """A PNG image; uint8 values are kept, float values in [0, 1] are scaled to [0, 255] and clipped."""
    arr = convert_to_HWC(make_np(tensor), dataformats)
    arr = (arr.astype(np.float32) * _scale_factor(arr)).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(arr, rescale=rescale))])


def image_boxes(tag: str, tensor_image, tensor_boxes, rescale=1, dataformats: str = "CHW", labels=None) -> Summary:
    arr = convert_to_HWC(make_np(tensor_image), dataformats)
    boxes = make_np(tensor_boxes)
    arr = arr.astype(np.float32) * _scale_factor(arr)
    img = make_image(arr.clip(0, 255).astype(np.uint8), rescale=rescale, rois=boxes, labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def _draw_boxes(img, boxes, labels=None):
    from PIL import ImageDraw, ImageFont  # optional: PIL

    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    for i in range(boxes.shape[0]):
        left, top, right, bottom = (float(v) for v in boxes[i, :4])
        draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)], width=2, fill="Red")
        if labels is not None:
            text = labels[i]
            x0, y0, x1, y1 = font.getbbox(text)
            margin = np.ceil(0.05 * (y1 - y0))
            draw.rectangle([(left, bottom - (y1 - y0) - 2 * margin), (left + (x1 - x0), bottom)], fill="Red")
            draw.text((left + margin, bottom - (y1 - y0) - margin), text, fill="black", font=font)
    return img


def make_image(arr: np.ndarray, rescale=1, rois=None, labels=None) -> Summary.Image:
    """Encode an HWC uint8 array as a PNG ``Summary.Image``."""
    from PIL import Image  # optional: PIL

    height, width, channel = arr.shape
    img = Image.fromarray(arr)
    if rois is not None:
        img = _draw_boxes(img, rois, labels)
    img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    with io.BytesIO() as out:
        img.save(out, format="PNG")
        data = out.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channel, encoded_image_string=data)


def audio(tag: str, tensor, sample_rate: int = 44100) -> Summary:
    """A mono 16-bit WAV clip; amplitudes outside [-1, 1] are clipped."""
    arr = make_np(tensor).squeeze()
    if abs(arr).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        arr = arr.clip(-1, 1)
    if arr.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    arr = (arr * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as fio:
        with wave.open(fio, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(sample_rate)
            w.writeframes(arr.data)
        data = fio.getvalue()
    snd = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=arr.shape[-1],
                        encoded_audio_string=data, content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=snd)])


def text(tag: str, text: str) -> Summary:
    """Markdown text for the ``text`` plugin, under ``<tag>/text_summary``."""
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=smd, tensor=proto)])


def custom_scalars(layout: dict) -> Summary:
    """The ``custom_scalars`` layout: ``{category: {title: ["Multiline" | "Margin", tags]}}``."""
    categories = []
    for cat, charts_spec in layout.items():
        charts = []
        for title, (kind, tags) in charts_spec.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                charts.append(layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                charts.append(layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=cat, chart=charts))
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    proto = TensorProto(dtype="DT_STRING", string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto, metadata=smd)])


def _pr_summary(tag: str, data: np.ndarray, num_thresholds: int) -> Summary:
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=TensorShapeProto(
        dim=[TensorShapeProto.Dim(size=data.shape[0]), TensorShapeProto.Dim(size=data.shape[1])]))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None) -> Summary:
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, np.stack([make_np(a) for a in (tp, fp, tn, fn, precision, recall)]), num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None) -> Summary:
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights), num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None) -> np.ndarray:
    """Rows tp, fp, tn, fn, precision, recall at ``num_thresholds`` evenly spaced thresholds."""
    minimum = 1e-7
    if weights is None:
        weights = 1.0
    idx = np.int32(np.floor(predictions * (num_thresholds - 1)))
    lab = labels.astype(np.float64)
    rng = (0, num_thresholds - 1)
    tp_b, _ = np.histogram(idx, bins=num_thresholds, range=rng, weights=lab * weights)
    fp_b, _ = np.histogram(idx, bins=num_thresholds, range=rng, weights=(1.0 - lab) * weights)
    tp = np.cumsum(tp_b[::-1])[::-1]
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum, tp + fp)
    recall = tp / np.maximum(minimum, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None) -> Summary:
    """Vertices, faces and colors for the ``mesh`` plugin, one tensor summary each."""
    json_config = json.dumps(config_dict, sort_keys=True) if config_dict is not None else "{}"
    parts = [(t, ct) for t, ct in ((vertices, MeshPluginData.VERTEX), (faces, MeshPluginData.FACE),
                                   (colors, MeshPluginData.COLOR)) if t is not None]
    components = mesh_metadata.get_components_bitmask([ct for _, ct in parts])
    values = []
    for t, ct in parts:
        arr = make_np(t)
        smd = mesh_metadata.create_summary_metadata(tag, display_name, ct, components, arr.shape, description,
                                               json_config=json_config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=arr.reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in arr.shape]))
        values.append(Summary.Value(tag=mesh_metadata.get_instance_name(tag, ct), tensor=proto, metadata=smd))
    return Summary(value=values)
