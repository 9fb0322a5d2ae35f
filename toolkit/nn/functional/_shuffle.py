"""``F.pixel_shuffle``, ``F.pixel_unshuffle``, ``F.channel_shuffle`` and ``F.native_channel_shuffle``: the
registry's ops under F's names."""

from __future__ import annotations

from ...ops import api as _api

__all__ = ["channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]

pixel_shuffle = _api.function_for("pixel_shuffle")
pixel_unshuffle = _api.function_for("pixel_unshuffle")
channel_shuffle = _api.function_for("channel_shuffle")
native_channel_shuffle = _api.function_for("native_channel_shuffle")
