"""The known-person attacker on Adult at k = 10 (issue 36, item 2): ``risk --json``'s
``known_person`` figures for the default release, the class release of (10, 4) on occupation
and its ring release (``--structure rings``, read with its manifest).

Each release is made by ``anonymize`` (seed 1) and measured by ``risk`` in a fresh process.

Usage: ``python benchmarks/known_person.py`` (needs $ANONYMATCH_DATA/adult/adult.data); writes
docs/results.md (section ``known-person``) and benchmarks/results/known_person.json.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from _common import ADULT_CLI, adult_path, dump, machine, run_cli, update_results

QI7 = "age,workclass,education-num,marital-status,race,sex,native-country"
CLI7 = [*ADULT_CLI[:2], "--qi", QI7, *ADULT_CLI[4:]]
RELEASES = {
    "plain: `--k 10 --sensitive income --l 1` (8 QIs)": (
        ADULT_CLI,
        ["--sensitive", "income", "--l", "1"],
    ),
    "default ℓ = 2: `--k 10 --sensitive income` (8 QIs)": (ADULT_CLI, ["--sensitive", "income"]),
    "classes: `--k 10 --l 4 --sensitive occupation` (7 QIs)": (
        CLI7,
        ["--sensitive", "occupation", "--l", "4"],
    ),
    "rings: the same with `--structure rings`, risk with `--manifest`": (
        CLI7,
        ["--sensitive", "occupation", "--l", "4", "--structure", "rings"],
    ),
}


def main() -> None:
    original = adult_path()
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (cli, extra)) in enumerate(RELEASES.items()):
            release, manifest = Path(tmp) / f"r{i}.csv", Path(tmp) / f"r{i}.json"
            made = ["anonymize", original, *cli, "-o", str(release), "--k", "10", *extra]
            run_cli([*made, "--report", str(manifest), "--seed", "1", "-q", "--force"])
            figures = Path(tmp) / f"risk{i}.json"
            risk = ["risk", original, str(release), *cli, *extra[:2], "--report", str(figures)]
            if "rings" in extra:
                risk += ["--manifest", str(manifest)]
            run = run_cli(risk)
            known = json.loads(figures.read_text())["known_person"]
            seconds = json.loads(manifest.read_text())["seconds"]
            out[name] = {"known_person": known, "risk": run, "anonymize": seconds}
    dump("known_person", {"releases": out, "machine": machine()})
    lines = [
        "## The known-person attacker (issue 36)",
        "",
        "What one person's true row gives away about the others of their class, ring or "
        "freeform component ([the model](guarantees/known-person.md)): the most other people "
        "one known person makes certain (row, or sensitive value), the mean over people, the "
        "mean share of the others of their part (± its standard error where sampled: 200 "
        "hypotheses), and the largest posterior. Adult (30,162 people), k = 10, seed 1. "
        f"{machine()}.",
        "",
        "Command: `python benchmarks/known_person.py`.",
        "",
        "The last column is the time `anonymize` spent on the same figures for the manifest's "
        "`risk` block (`seconds.known_person`) and its whole wall time.",
        "",
        "| release | units | made certain | most | mean | mean share | largest posterior "
        "| in anonymize (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in out.items():
        known, took = entry["known_person"], entry["anonymize"]  # type: ignore[index]
        units = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in known["units"].items() if v)
        figures = [("rows", known["rows"])] + [
            (f"{c} values", f) for c, f in known["sensitive"].items()
        ]
        for j, (what, f) in enumerate(figures):
            se = f" ± {100 * f['share_mean_standard_error']:.2f}" if known["sampled"][
                "hypotheses"] else ""  # fmt: skip
            lines.append(
                f"| {name if j == 0 else ''} | {units if j == 0 else ''} | {what} | "
                f"{f['certain_max']:,} | {f['certain_mean']:.2f} | "
                f"{100 * f['share_mean']:.2f}%{se} | {f['posterior_max']:.3f} | "
                f"{took.get('known_person', 0):.1f} of {took['wall']:.1f} |"
            )
    lines += [
        "",
        "Without a certificate `risk` measures the candidate graph (classes whose cells overlap "
        "make one freeform component); the ring release is read with its manifest, so its "
        "rings are units of their own: one member's row fixes the shift, and with it every "
        "other member's row and occupation; the means are over every person, so the ring "
        "release's 7 % is its ring members (who lose everything) among class members (who lose "
        "nothing). Units sampled: the largest posterior is over the exact units and 1 where a "
        "sampled hypothesis made a row certain. Times vary with the machine's load (it was "
        "shared with other jobs).",
    ]
    update_results("known-person", "\n".join(lines))


if __name__ == "__main__":
    main()
