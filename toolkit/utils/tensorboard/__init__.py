"""``toolkit.utils.tensorboard``: PyTorch's ``SummaryWriter``, writing event files the real TensorBoard reads.

Built on the protobuf definitions the ``tensorboard`` package ships; TensorFlow is not needed.
"""

from ._crc32c import crc32c, masked_crc32c
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter", "crc32c", "masked_crc32c"]
