"""The top-level package: the table front re-exported, the kinds as attributes, cheap import."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import anonymatch
from tests.factories import random_frame


def test_top_level_is_the_tables_front() -> None:
    assert anonymatch.anonymize is anonymatch.tables.anonymize
    assert anonymatch.verify is anonymatch.tables.verify
    assert anonymatch.evaluate is anonymatch.tables.evaluate
    assert anonymatch.risk is anonymatch.tables.risk
    for kind in (
        anonymatch.tables,
        anonymatch.sets,
        anonymatch.sparse,
        anonymatch.graphs,
        anonymatch.relational,
    ):
        extra = {"risk", "run_job"} if kind is anonymatch.tables else set()
        extra |= {"risk"} if kind is anonymatch.relational else set()
        assert set(kind.__all__) == {"anonymize", "verify", "evaluate"} | extra
        assert all(callable(getattr(kind, name)) for name in kind.__all__)
    assert anonymatch.__version__ == "0.1.0"
    for name in ("InputError", "InfeasibleError", "VerificationError", "WorkerError"):
        assert issubclass(getattr(anonymatch, name), anonymatch.AnonymatchError)


def test_the_analyst_functions_import_from_the_tables_front() -> None:
    """What the top level offers an analyst is importable from ``anonymatch.tables`` too."""
    from anonymatch.tables import draw_microdata, read_release, rubin_combine  # noqa: F401

    assert anonymatch.tables.read_release is anonymatch.read_release
    for name in ("midpoints", "mean_bounds", "uniform_histogram", "ReleaseFeatures"):
        assert getattr(anonymatch.tables, name) is not None


def test_old_mixed_reexports_are_gone() -> None:
    for name in ("anonymize_sparse", "verify_sparse", "edge_metrics", "read_sparse", "Schema"):
        assert not hasattr(anonymatch, name)


def test_front_functions_survive_importing_the_verify_submodules() -> None:
    import anonymatch.graphs.verify
    import anonymatch.relational.verify
    import anonymatch.sets.verify
    import anonymatch.sparse.verify
    import anonymatch.tables.risk.risk
    import anonymatch.tables.verify  # noqa: F401
    from anonymatch.tables.risk.risk import RiskReport
    from anonymatch.tables.verify import VerificationReport

    for kind in (
        anonymatch.tables,
        anonymatch.sets,
        anonymatch.sparse,
        anonymatch.graphs,
        anonymatch.relational,
    ):
        assert callable(kind.verify) and kind.verify.__module__ == kind.__name__
    assert VerificationReport.__name__ == "VerificationReport"
    assert callable(anonymatch.tables.risk) and RiskReport.__name__ == "RiskReport"
    assert "anonymatch.tables.verify" in sys.modules


def test_import_is_cheap() -> None:
    code = (
        "import sys, anonymatch; "
        "heavy = {'dask', 'ortools', 'sklearn', 'numba', 'pandas', 'scipy'}; "
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_comma_strings_equal_lists() -> None:
    frame = random_frame(24, 5, 1, 1, 4).rename(columns={"n0": "a", "c0": "b"})
    as_text = anonymatch.anonymize(frame, k=3, qi="a,b", numeric="a", seed=4)
    as_list = anonymatch.anonymize(frame, k=3, qi=["a", "b"], numeric=["a"], seed=4)
    pd.testing.assert_frame_equal(as_text.table, as_list.table)
    assert as_text.report["parameters"] == as_list.report["parameters"]
    assert as_text.release is as_text.table


def test_original_first_and_keyword_only() -> None:
    frame = random_frame(30, 2, 1, 1, 4)
    result = anonymatch.anonymize(frame, k=3, qi="n0,c0", numeric="n0", sensitive="s", seed=1)
    assert result.report["verification"]["passed"]  # type: ignore[index]
    assert anonymatch.verify(frame, result.release, k=3, qi="n0,c0", numeric="n0").passed
    assert anonymatch.verify(frame, result, k=3, qi="n0,c0", numeric="n0").passed
    loss = anonymatch.evaluate(frame, result, qi="n0,c0", numeric="n0")
    assert loss.to_dict()["gcp"] == result.report["loss"]["gcp"]  # type: ignore[index]
    with pytest.raises(TypeError):
        anonymatch.anonymize(frame, 3, "n0,c0")  # type: ignore[misc]
    with pytest.raises(TypeError):
        anonymatch.verify(frame, result.release, 3, "n0,c0")  # type: ignore[misc]
    # the release in the original's place does not parse as the original's QIs
    with pytest.raises(anonymatch.InputError):
        anonymatch.verify(result.release, frame, k=3, qi="n0,c0", numeric="n0")


def test_tables_front_validates() -> None:
    frame = random_frame(12, 3, 1, 1, 3)
    with pytest.raises(TypeError, match="^data must be a pandas DataFrame, got list$"):
        anonymatch.anonymize(frame.values.tolist(), k=2, qi="n0")
    with pytest.raises(TypeError, match="^original must be a pandas DataFrame"):
        anonymatch.verify(frame.values, frame, k=2, qi="n0")
    with pytest.raises(TypeError, match="^qi must be"):
        anonymatch.anonymize(frame, k=2, qi=3)  # type: ignore[arg-type]
    with pytest.raises(anonymatch.InputError, match="^`k` must be an integer of at least 1"):
        anonymatch.anonymize(frame, k=0, qi="n0")
    with pytest.raises(anonymatch.InputError, match="^seed must"):
        anonymatch.anonymize(frame, k=2, qi="n0", seed=-1)
    with pytest.raises(anonymatch.InputError, match="weights"):
        anonymatch.anonymize(frame, k=2, qi="n0", weights={"n0": -1.0})
    with pytest.raises(anonymatch.InputError, match="^`partition_size` must"):
        anonymatch.anonymize(frame, k=2, qi="n0", partition_size=0)
    with pytest.raises(anonymatch.InputError, match="^`time_limit` must"):
        anonymatch.anonymize(frame, k=2, qi="n0", time_limit=-1)
    with pytest.raises(anonymatch.InfeasibleError):
        anonymatch.anonymize(frame, k=13, qi="n0")
