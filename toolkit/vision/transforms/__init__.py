"""Image transforms, as ``torchvision.transforms``: composable callables on PIL images and tensors.

Random transforms draw from toolkit's default generator exactly as torchvision draws from torch's
(``rand(1)`` for a flip, ``randint`` for a crop offset), so ``toolkit.manual_seed(s)`` makes a pipeline
reproducible, and gives the same choices as torchvision after ``torch.manual_seed(s)``::

    transform = transforms.Compose([
        transforms.RandomCrop(28, padding=2),
        transforms.ToTensor(),
        transforms.Normalize((0.1307,), (0.3081,)),
    ])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...ops.api import rand, randint
from . import functional
from . import functional as F
from ._base import _setup_size, _Transform
from ._color_transforms import ColorJitter, Grayscale, RandomGrayscale
from ._geometry import Pad, RandomResizedCrop, RandomVerticalFlip
from .functional import InterpolationMode

__all__ = ["CenterCrop", "ColorJitter", "Compose", "Grayscale", "InterpolationMode", "Lambda", "Normalize", "PILToTensor",
           "Pad", "RandomCrop", "RandomGrayscale", "RandomHorizontalFlip", "RandomResizedCrop", "RandomVerticalFlip",
           "Resize", "ToPILImage", "ToTensor", "functional"]


class Compose:
    """Apply transforms one after another."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + "("
        for t in self.transforms:
            format_string += "\n"
            format_string += f"    {t}"
        format_string += "\n)"
        return format_string


class ToTensor:
    """PIL image or HWC ndarray to a CHW tensor; uint8 data is scaled to float in [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """CHW tensor or HWC ndarray to a PIL image; ``mode`` as in ``functional.to_pil_image``."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + "("
        if self.mode is not None:
            format_string += f"mode={self.mode}"
        return format_string + ")"


class PILToTensor:
    """PIL image to a CHW tensor of the same dtype, without scaling."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class Normalize(_Transform):
    """Per-channel ``(x - mean) / std`` of a float tensor image."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(_Transform):
    """Resize to ``(h, w)``, or match the smaller edge to an int ``size`` keeping the aspect ratio."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size: int | None = None,
                 antialias: bool | None = True) -> None:
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = F._interpolation(interpolation)
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self) -> str:
        detail = (f"(size={self.size}, interpolation={self.interpolation.value}, max_size={self.max_size}, "
                  f"antialias={self.antialias})")
        return f"{self.__class__.__name__}{detail}"


class CenterCrop(_Transform):
    """Crop the center; images smaller than ``size`` are zero-padded first."""

    def __init__(self, size) -> None:
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class RandomCrop(_Transform):
    """Crop at a random position, after optional padding (``pad_if_needed`` pads images smaller than ``size``)."""

    @staticmethod
    def get_params(img, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random crop of ``output_size``."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = randint(0, h - th + 1, size=(1,)).item()
        j = randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0, padding_mode: str = "constant"):
        self.size = tuple(_setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(_Transform):
    """Flip left to right with probability ``p`` (one ``rand(1)`` draw per call)."""

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def forward(self, img):
        if bool(rand(1) < self.p):
            return F.hflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class Lambda:
    """Apply a user function."""

    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"
