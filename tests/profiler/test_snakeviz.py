"""pstats helpers and a real snakeviz server on loopback."""

from __future__ import annotations

import pstats
import urllib.request

import pytest

import toolkit
from toolkit.profiler import python as pyprof


def _work():
    a = toolkit.ones(20, 20)
    for _ in range(20):
        a = a.mm(a) * 0.01
    return a


def test_cprofile_writes_a_pstats_file(tmp_path):
    path = str(tmp_path / "w.prof")
    result, out = pyprof.cprofile(_work, path=path)
    assert out == path and result.shape == (20, 20)
    stats = pstats.Stats(path)
    assert any(func[2] == "_work" for func in stats.stats)
    assert "_work" in pyprof.summary(path, limit=50)


def test_snakeviz_serves_the_profile_and_stops(tmp_path):
    _, path = pyprof.cprofile(_work, path=str(tmp_path / "w.prof"))
    server = pyprof.start_snakeviz(path)
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.process.poll() is None
        with urllib.request.urlopen(server.url, timeout=10) as r:
            page = r.read().decode()
        assert r.status == 200 and "snakeviz" in page.lower() and "_work" in page
    finally:
        server.stop()
    assert server.process.poll() is not None
    with pytest.raises(OSError):
        urllib.request.urlopen(server.url, timeout=2)


def test_snakeviz_that_cannot_start_says_why(tmp_path):
    with pytest.raises(RuntimeError, match="snakeviz exited"):
        pyprof.start_snakeviz(str(tmp_path / "missing.prof"), timeout=20)
    cmd = pyprof.snakeviz_command("x.prof", port=9999)
    assert cmd[1:3] == ["-m", "snakeviz"] and "-s" in cmd and cmd[-3:-1] == ["-p", "9999"]
