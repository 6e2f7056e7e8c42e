"""The ecosystem's idiom: dtypes as torch and NumPy name them (torch's dtype objects, NumPy's, the long
names), each the same run as pecheck's short name (same seed, same verdicts), the report still naming
them f32, bf16, f16, and a float64 or an unknown name one ValueError naming the argument; a typed
package (py.typed, annotations on check); `import pecheck` loading neither torch nor transformers
nor the zoo."""
import numpy as np
import pytest

import pecheck

torch = pytest.importorskip("torch")

CONVENTION = {"rope_theta": 10000.0, "layout": "interleaved"}


def summary_of(report):
    return [(r.property, r.dtype, r.verdict, r.max_error_u) for r in report.results]


@pytest.mark.parametrize("given, short", [
    ((torch.float32, torch.bfloat16), ("f32", "bf16")),
    (torch.float16, ("f16",)),
    ((np.float32, np.dtype("float16")), ("f32", "f16")),
    (("float32", "bfloat16"), ("f32", "bf16")),
])
def test_an_ecosystem_dtype_is_the_same_run_as_its_short_name(good_rope, given, short):
    kw = dict(cases=10, seed=5, properties="rope.agrees_with_reference")
    ours = pecheck.check(good_rope, "rope", CONVENTION, dtypes=given, **kw)
    theirs = pecheck.check(good_rope, "rope", CONVENTION, dtypes=short, **kw)
    assert summary_of(ours) == summary_of(theirs) and {r.dtype for r in ours.results} == set(short)
    assert ours.result("rope.agrees_with_reference", given if not isinstance(given, tuple) else given[0]).ok
    assert ours.contract(short[0]) == theirs.contract(short[0])


@pytest.mark.parametrize("bad", [torch.float64, np.float64, "f64", torch.int32, (torch.float32, "double")])
def test_a_dtype_pecheck_does_not_store_is_one_error(good_rope, bad):
    with pytest.raises(ValueError) as e:
        pecheck.check(good_rope, "rope", CONVENTION, dtypes=bad, cases=5)
    assert str(e.value).startswith("dtypes: ") and "\n" not in str(e.value)


def test_the_package_is_typed():
    import importlib.resources

    assert importlib.resources.files("pecheck").joinpath("py.typed").is_file()
    hints = pecheck.check.__annotations__
    assert hints["return"] is pecheck.Report and "dtypes" in hints and "convention" in hints


def test_import_pecheck_loads_neither_torch_nor_transformers():
    import subprocess
    import sys

    code = ("import sys, pecheck, pecheck.hf_config; "
            "print(sorted({'torch', 'transformers', 'pecheck.zoo'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
