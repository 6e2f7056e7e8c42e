"""torch devices (issue 33, item 4): device= puts every tensor fn is handed on that device and
reads its output back from there; a device this machine lacks skips every property, saying which,
and assert_holds skips the test instead of failing it."""
import pytest

import pecheck

torch = pytest.importorskip("torch")


def rope_on(device_type):
    def fn(x, positions):
        assert x.device.type == device_type and positions.device.type == device_type
        d = x.shape[-1]
        inv_freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
        angles = positions.to(torch.float64)[:, None, None] * inv_freq
        a, b = x[..., : d // 2].double(), x[..., d // 2:].double()
        return torch.cat([a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos()], -1).to(x.dtype)

    return fn


def test_the_cpu_device_is_the_default_and_can_be_named():
    report = pecheck.check(rope_on("cpu"), "rope", {"rope_theta": 10000.0}, framework="torch", device="cpu",
                           dtypes="f32", cases=10)
    assert report.ok, report.summary()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device: checked for real below")
def test_an_absent_device_skips_every_property_saying_so():
    report = pecheck.check(rope_on("cuda"), "rope", {"rope_theta": 10000.0}, framework="torch", device="cuda",
                           dtypes=("f32", "bf16"), cases=10)
    assert report.results and report.vacuous and not report.ok
    assert all(r.verdict == "skip" and "device 'cuda': this machine has none" in r.message for r in report.results)
    with pytest.raises(pytest.skip.Exception, match="device 'cuda'"):
        pecheck.assert_holds(rope_on("cuda"), "rope", {"rope_theta": 10000.0}, framework="torch", device="cuda",
                             dtypes="f32", cases=10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_a_cuda_rope_is_checked_on_the_gpu():
    report = pecheck.check(rope_on("cuda"), "rope", {"rope_theta": 10000.0}, framework="torch", device="cuda",
                           dtypes="f32", cases=10)
    assert report.ok, report.summary()


def test_a_device_needs_torch():
    with pytest.raises(ValueError, match="device: only framework='torch' puts tensors on a device"):
        pecheck.check(lambda x, positions: x, "rope", {"rope_theta": 1e4}, device="cuda")
