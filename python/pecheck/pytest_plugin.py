"""pytest plugin (entry point pytest11 "pecheck"): --pecheck-seed and --pecheck-cases set the
defaults of pecheck.assert_holds, and the header names the seed so that a CI failure replays
locally with the same cases."""

import os

from . import DEFAULT_SEED, testing


def pytest_addoption(parser):
    group = parser.getgroup("pecheck")
    group.addoption("--pecheck-seed", type=int, default=None,
                    help=f"seed of every pecheck check (default: PECHECK_SEED, else {DEFAULT_SEED})")
    group.addoption("--pecheck-cases", type=int, default=None, help="cases per property (default 100)")


def _seed(config):
    seed = config.getoption("--pecheck-seed")
    return seed if seed is not None else int(os.environ.get("PECHECK_SEED", DEFAULT_SEED))


def pytest_configure(config):
    testing._defaults["seed"] = _seed(config)
    cases = config.getoption("--pecheck-cases")
    if cases is not None:
        testing._defaults["cases"] = cases


def pytest_report_header(config):
    cases = testing._defaults.get("cases", 100)
    return f"pecheck: seed {_seed(config)}, {cases} cases per property (replay: --pecheck-seed {_seed(config)})"
