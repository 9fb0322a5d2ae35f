"""``FakeData``: random images and labels, the same for the same index on every call and every run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ops.api import randint, randn
from ...random import get_rng_state, manual_seed, set_rng_state
from ..transforms.functional import to_pil_image
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """``size`` samples ``(PIL image, int label)``; sample ``i`` draws ``randn(*image_size)`` and a label in
    ``[0, num_classes)`` after seeding the default generator with ``i + random_offset``, and restores the
    generator's state afterwards, as torchvision does, so the values equal torchvision's."""

    def __init__(self, size: int = 1000, image_size: tuple[int, int, int] = (3, 224, 224), num_classes: int = 10,
                 transform: Callable | None = None, target_transform: Callable | None = None,
                 random_offset: int = 0) -> None:
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = get_rng_state()
        manual_seed(index + self.random_offset)
        img = randn(*self.image_size)
        target = randint(0, self.num_classes, size=(1,))[0]
        set_rng_state(rng_state)
        img = to_pil_image(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item() if hasattr(target, "item") else target

    def __len__(self) -> int:
        return self.size
