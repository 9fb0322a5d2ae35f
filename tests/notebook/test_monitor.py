"""TrainingMonitor: every value recorded, redraws bounded by min_interval, final state always drawn."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

import toolkit
from toolkit.notebook import TrainingMonitor

from .untrusted import sanitize, untrusted_mime


def test_updates_are_recorded_but_redraws_are_rate_limited():
    mon = TrainingMonitor(total=200, min_interval=3600, display=False)
    drawn = [mon.update(loss=1.0 / (i + 1)) for i in range(200)]
    assert drawn[0] and drawn[-1] and sum(drawn) == 2  # the first draw, then the last step
    assert len(mon.history["loss"]) == 200 and mon.history["loss"][-1] == (200, 1.0 / 200)
    mon.close()
    assert mon.redraws == 3 and mon.closed
    with pytest.raises(RuntimeError, match="after close"):
        mon.update(loss=0.0)


def test_redraws_follow_elapsed_time():
    mon = TrainingMonitor(min_interval=0.05, display=False)
    for _ in range(5):
        mon.update(loss=1.0)
        time.sleep(0.06)
    assert mon.redraws == 5


def test_tensor_values_and_explicit_steps():
    mon = TrainingMonitor(display=False)
    mon.update(10, loss=toolkit.tensor(0.5), acc=0.25)
    assert mon.step == 10 and mon.history == {"loss": [(10, 0.5)], "acc": [(10, 0.25)]}


def test_html_has_progress_and_one_plot_per_metric():
    with TrainingMonitor(total=4, display=False, min_interval=0) as mon:
        for i in range(2):
            mon.update(loss=2.0 - i, acc=0.5 * i)
    html = mon.to_html()
    assert 'data-fraction="0.5000"' in html and "step 2/4" in html
    assert re.findall(r'data-metric="(\w+)"', html) == ["loss", "acc"]
    assert 'data-state="done"' in html


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="total must be a positive"):
        TrainingMonitor(total=0)
    with pytest.raises(ValueError, match="min_interval"):
        TrainingMonitor(min_interval=-1)


def test_outside_a_kernel_prints_a_bounded_number_of_lines():
    code = ("from toolkit.notebook import TrainingMonitor\n"
            "with TrainingMonitor(total=1000, min_interval=3600) as m:\n"
            "    for i in range(1000): m.update(loss=i)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("training: step 1000/1000 loss=999")


def _monitor():
    mon = TrainingMonitor(total=100, display=False)
    for i in range(60):
        mon.update(loss=1.0 / (i + 1), acc=i / 60)
    return mon


def test_bundle_carries_the_plots_as_an_image_and_static_bars_for_untrusted_notebooks():
    bundle = _monitor()._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml"}
    assert bundle["text/plain"].startswith("training: step 60/100")
    svg = bundle["image/svg+xml"]
    assert svg.count("<polyline") == 2 and "loss = 0.016667" in svg
    assert untrusted_mime(bundle) == "text/html"
    shown = sanitize(bundle["text/html"])
    assert "<svg" not in shown and "<style" not in shown
    static = re.findall(r'<div class="tk-static-only" style="[^"]*">(.*?)</div></div>', shown)
    assert len(static) == 2  # one bar chart per metric
    heights = [int(h) for h in re.findall(r"height:(\d+)px;background-color", static[0])]
    assert len(heights) == 60 and heights == sorted(heights, reverse=True)  # the falling loss
    assert 'style="height:12px' in shown and "width:60.0%" in shown  # the progress bar keeps its look


def test_html_svg_has_no_text_that_would_leak_when_sanitized():
    html = _monitor().to_html()
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(svgs) == 2 and not any("<text" in s for s in svgs)
    assert "<span>1</span>" in html  # the axis range is HTML instead


def test_colours_follow_the_jupyterlab_theme():
    html = _monitor().to_html()
    for var in ("--jp-layout-color1", "--jp-layout-color2", "--jp-ui-font-color1", "--jp-border-color2"):
        assert f"var({var}, #" in html
    assert ".tk-static-only { display: none; }" in html  # trusted: the SVG curves, not the bars
