"""The pytest plugin: --pecheck-seed and --pecheck-cases, the seed in the header, and what a
failing assert_holds prints."""
import textwrap

pytest_plugins = ["pytester"]

FAILING = textwrap.dedent(
    '''
    import numpy as np
    import pecheck

    def fp32_angles(x, positions):
        d = x.shape[-1]
        inv = (10000.0 ** (-np.arange(0, d, 2, dtype=np.float32) / d)).astype(np.float32)
        ang = positions.astype(np.float32)[:, None] * inv  # fp32 angles: wrong far out
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
        return out

    def test_rope():
        pecheck.assert_holds(fp32_angles, "rope", {"rope_theta": 10000.0, "layout": "interleaved"},
                             dtypes="f32", properties="rope.agrees_with_reference", contract="exact")
    '''
)


def test_header_names_the_seed_and_a_failure_explains_itself(pytester):
    pytester.makepyfile(test_fp32=FAILING)
    result = pytester.runpytest_subprocess("--pecheck-seed", "123", "--pecheck-cases", "40")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pecheck: seed 123, 40 cases per property*",
            "*FAIL rope.agrees_with_reference / f32 after * cases*",
            "*theorem: Every rotated pair is within 2u*docs/properties/rope.agrees_with_reference.md*",
            "*counterexample (shrunk): rope(layout=interleaved*",
            "*error: * u at the counterexample (its bound 2 u), * u at worst over * cases (bound 2 u there)*",
            "*replay: *seed=123*",
        ]
    )


def test_the_seed_replays(pytester):
    pytester.makepyfile(test_fp32=FAILING)
    first = pytester.runpytest_subprocess("--pecheck-seed", "5")
    second = pytester.runpytest_subprocess("--pecheck-seed", "5")
    pick = lambda r: [line for line in r.stdout.lines if "counterexample (shrunk)" in line]  # noqa: E731
    assert pick(first) and pick(first) == pick(second)
