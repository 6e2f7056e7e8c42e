"""The assertion for tests: pecheck.assert_holds(fn, op, convention, ...). Under pytest the seed
and case count default to --pecheck-seed and --pecheck-cases (pecheck.pytest_plugin)."""

from typing import Any, Callable, Dict, Mapping, Union

from ._report import Report

_defaults: Dict[str, Any] = {}  # set by the pytest plugin from its options


def assert_holds(fn: Callable[..., Any], op: str = "rope", convention: Union[Mapping[str, Any], str, None] = None,
                 **kwargs: Any) -> Report:
    from . import check

    for key, value in _defaults.items():
        kwargs.setdefault(key, value)
    report = check(fn, op, convention, **kwargs)
    device = kwargs.get("device")
    if report.vacuous and device and all(r.message.startswith(f"device '{device}'") for r in report.results):
        import pytest  # a machine without the device: the test does not apply here, it did not fail

        pytest.skip(report.results[0].message if report.results else f"device '{device}' is absent")
    if report.vacuous:
        first = next((r.message for r in report.results if r.message), "no property selected")
        raise AssertionError(f"pecheck: nothing of {report.function} was judged: all {len(report.results)} checks "
                             f"were skipped (seed {report.seed}); first: {first}")
    if not report.ok:
        text = "\n\n".join(r.explain() for r in report.failures)
        raise AssertionError(
            f"pecheck: {len(report.failures)} of {len(report.results)} checks of {report.function} failed "
            f"(seed {report.seed})\n\n{text}"
        )
    return report
