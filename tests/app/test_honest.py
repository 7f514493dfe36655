"""``app.honest``: the words every front end uses for a release's weaknesses (issue 36: a
sensitive column published unprotected, the default ℓ = 2)."""

from __future__ import annotations

from anonymatch.app.honest import default_model_note, unprotected_warning, warnings_of
from anonymatch.app.tablejob import manifest_keywords, unchecked_claims


def _manifest(guarantee: dict[str, object]) -> dict[str, object]:
    parameters = {"qi": ["age"], "numeric": ["age"], "sensitive": ["s", "u"], "identifiers": []}
    return {"method": "hungarian", "parameters": parameters, "guarantee": guarantee}


def test_unprotected_column_is_warned_about_and_rebuilt_as_l1() -> None:
    default = {"column": "u", "diversity": "distinct", "l": 2, "default": True}
    manifest = _manifest(
        {"model": "k-anonymity", "k": 3, "sensitive": [default], "unprotected": ["s"]}
    )
    warning = unprotected_warning(manifest)
    assert warning is not None and "'s' published without protection (l = 1)" in warning
    assert warning in warnings_of(manifest)
    note = default_model_note(manifest)
    assert note is not None and "'u': distinct ℓ = 2 applied by default" in note
    keywords = manifest_keywords(manifest)
    assert keywords["l"] == {"s": 1}  # u: the default again, not an explicit l
    assert unchecked_claims(manifest, None) == []  # a warning, not an unknown claim


def test_manifest_before_the_default_reads_as_unprotected() -> None:
    manifest = _manifest({"model": "k-anonymity", "k": 3})  # no model, no unprotected key
    assert manifest_keywords(manifest)["l"] == {"s": 1, "u": 1}
    assert unprotected_warning(manifest) is None and default_model_note(manifest) is None


def test_result_page_lists_the_unprotected_column() -> None:
    from anonymatch.ui.data import guarantee

    manifest = _manifest({"model": "k-anonymity", "k": 3, "unprotected": ["s"]})
    shown = guarantee(manifest)
    assert ("s", "published without protection (ℓ = 1)") in shown["sensitive"]
    assert shown["unprotected_warning"] == unprotected_warning(manifest)
