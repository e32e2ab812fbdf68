"""`diff` and `lint` of a big master (issue 25), each beside the ``import yaml, msgpack`` baseline, one run.

    python bench/diff_lint.py [--corpus PATH] [--runs N] [--no-plain] [--only diff|lint]

Measured, every process fresh (wall time: median of ``--runs``; memory: the peak RSS of that
process, from ``wait4``), the baseline run alternately with the commands (``big_library.measured``):

* ``diff rocBLAS_Full.dat.gz rocBLAS_Full.yaml.gz`` (the same 21 288 solutions as msgpack and as
  78 MB of YAML: no differences, every table compared): target <= 8 s and <= 800 MB (issue 33);
* ``lint rocBLAS_Full.yaml.gz`` (340 dead, 1 719 shadowed entries, 680 unreachable kernels, each
  located by line): target <= 10 s and <= 800 MB;
* unless ``--no-plain``, both again on uncompressed copies in a temporary folder.

Where the time went (issue 25, before the fixes; cProfile, tracemalloc and ``/usr/bin/time -v``,
rocBLAS_Full): ``diff`` 26.9 s, 1.80 GB — reading both sides 9 s (YAML: yaml_rs 2.2 s, key
interning 3.5 s, depth check 2.3 s, the model ~2 s; msgpack 1.9 s), one ``raw()`` and one
recursive ``freeze`` per solution and side ~13 s, table comparison ~3.5 s (``freeze`` per
compared key), both masters held at once. ``lint`` 40 s, 1.77 GB — reading 10 s; one generated
and ``compile``d ``canSolve`` per solution (21 000, though ~3 400 distinct predicate sets) ~6 s;
``problem_base`` per solution (its predicate is shared by thousands) ~5 s; ``entry_problems``
(a pydantic ``model_copy`` per problem) and ``canSolve`` per table entry ~6 s; shadowing
witnesses (``_wins_leftward``: a selection per witness) ~5 s; locating each finding's line by a
walk of 7.3 M libyaml events ~11 s (the iteration alone ~5.7 s).

Where it goes after session 10 (diff 12.7 s / 850 MB, lint 18.7 s / 923 MB, same machine): the GC
is paused while a library is read and compared or linted; YAML is decoded one top-level key or
item at a time (parser peak 810 -> 525 MB), a master read from bytes is modelled without its
text beside it, and lint's findings are located on slices cut by indentation (6.6 -> 1.6 s). Reading rocBLAS_Full.yaml is now ~5.1 s (yaml_rs 2.1, key interning
1.6, the YAML 1.1 scan 1.1) plus 0.7 s for the model, the .dat 1.4 s; diff's tables ~1.5 s a side;
lint's entry decisions ~4 s and shadowing witnesses ~3 s. diff's peak is the YAML side's model
built while its decoded tree is alive; lint's is the text decoded again to locate the findings,
over what checking left (~800 MB).

Issue 33 (session 11, CPU seconds in one run on a busy machine): diff's first side's identities
1.9 s less (the by-value respelling of each record's text only where it could change anything);
lint's canSolve functions compiled for the signatures asked 32 times or more only (1.5 -> 0.6 s),
its memos' error tracebacks dropped when done (a cycle through the library: a 0.8-1.5 s
collection as lint_file returned), lint_library 9.7 -> 7.9 s. Left: reading the YAML (~4.3 s:
yaml_rs 1.8, the YAML 1.1 scan 0.75, cutting the text 0.45, key interning 0.6), the .dat 1.6 s,
each side's identities (model_dump, JSON text, its exactness check: ~1.7 s), lint's entry
decisions and witnesses (~7 s) and locating its findings (~2 s).

Issue 33, diff (helper "diff"; CPU seconds, before and after alternately in one run on a busy
machine: 11.8-14.2 -> 9.0-10.0 s, about -28 %; peak 864 -> 790 MB):
master kernels are paired by *shape* (``diff._Shape``: the record packed by msgpack with exact
types; the second side's kernel of an index is lent the first side's shape when its record is
``==`` to the one packed, as the .dat keeps keys in build order and the YAML sorts them), and
the full identity rule runs only where two kernels of different shapes are compared; the record
is the dump without the predicates, whose serialisations are taken once per interned predicate
(the dump 0.6 -> 0.23 s a side); a table whose rows (kept packed: ~120 MB -> ~9 MB while the
other side is read) and kernels by index are alike is not regrouped; the YAML key walk interns
each key sequence once (1.28 -> 1.02 s). Where it goes now (rocBLAS_Full, CPU s): reading the
YAML ~5.2 (yaml_rs 1.9, the key walk 1.0, the YAML 1.1 scan 0.75, cutting the text 0.45,
its text check 0.2, the model 0.85), the .dat ~1.5 (unpack 0.4, the depth walk 0.3, the model
0.7), the tables ~0.6 a side (the dumps 0.23, packing or reading back the partner's record
0.15-0.26), comparing 0.15, imports 0.3. The peak is the YAML side's tree and model, over
what the .dat side's tables keep (~50 MB) and the memory its model left.

Issue 33, reading (helper "yamlread"; CPU seconds, the tree before and after alternately, 2 pairs,
load average 3-5 on 2 CPUs; ``--no-plain``): diff 9.76, 9.26 -> 7.50, 7.69 s, peak 790 -> 738 MB;
lint 14.8, 15.7 -> 13.7, 13.3 s, peak 835 -> 669 MB; output byte-identical (text and --json of
diff and lint on rocBLAS_Full, every master of masters/ and masters-hipblaslt/ and respelled,
shuffled and changed YAML copies). A YAML master is modelled part by part as it is decoded
(``master_io.decode(models=True)``: each solution and the library tree validated as soon as its
piece is parsed; a part that fails stays plain and the whole validation reports it as before), so
its plain tree is never whole and the key walk is gone (the keys a solution's model keeps are
shared as each is read, ~0.2 s); the depth walk gives way to a bound the text proves
(``limits._nesting_bound``: columns, compact dashes and the bracket count's spread); reading
rocBLAS_Full.yaml alone 5.4 -> 4.7 s, peak 692 -> 530 MB. Lint's locating cuts its big top-level
piece by a line index built once (``yaml_codec._LineIndex``: lines by indentation, the lines whose
brackets do not balance) instead of reading each level's regions again (1.7 -> 0.8 s).

Issue 33, lint (helper "lint", ``--only lint --no-plain --runs 2``, the tree before and after
alternately, 4 pairs, load average 2-5 on 2 CPUs): CPU 20.7, 20.0, 18.6, 20.6 s -> 17.7, 16.7,
16.6, 19.4 s (mean 20.0 -> 17.6 s), peak 911 -> 836 MB, output byte-identical (text and --json,
rocBLAS_Full and every master of masters/ and masters-hipblaslt/). Problem bases (4 400, one per
table and problem predicate) read each predicate's fields once and validate each distinct template
as a GemmProblem once (26 000 validations -> ~1 000; ~0.9 s); an entry's problems are built on a
scratch copy of each template (no model copy per problem), memoized by key for the witnesses only
(the table pass asks for most keys once: the memo cost it more than it saved, ~0.35 s); a dead
entry's operand is asked of the other problems only when it fails the first; the size findings
label each problem predicate once; the model is let go before the text is decoded again to locate
the findings (the peak is now the reading's, ~820 MB, and checking's). Measured and left: the
shadowing witnesses' selections as one ``find_batch`` of the compiled library (41 251 distinct
queries) cost what the single ``find``s do (1.3-1.5 s each way, same answers), so the witnesses
stay single and memoized. Left (CPU, quiet machine): reading the YAML ~4.5 s and the model 0.9 s,
lint's entry decisions ~2.7 s (190 000 entries: a contraction problem and a canSolve each),
witnesses ~2.4 s (78 000 decisions, 41 000 selections), the size findings ~1 s (a model_dump and
msgpack of each solution), locating ~1.8 s (``yaml_codec._cut`` over 582 regions: 1.4 s;
``_top_level`` again, its ``_NOT_SLICEABLE`` regex scan 0.25 s of it, ``any(c in text ...)``
0.06 s), imports ~1 s.

Issue 33, lint (session 15, helper "lint"; ``--only lint --no-plain --runs 2``, the tree before
and after alternately, 3 pairs, load average 0-2 on 2 CPUs): CPU 14.7, 15.3, 16.3 s -> 14.5,
13.8, 13.7 s, peak 836-838 -> 841 MB, output byte-identical (72 outputs: text and --json of every master in
masters/, masters-hipblaslt/, KernelsLite* and rocBLAS_Full). The table pass decides a table's
keys in array passes (``lint.tables.entry_columns``: each key's problems as columns, the type
columns spread from one problem per template; each kernel signature's compiled predicates over
them, each predicate once a pass), at most 4 096 problems a pass (whole tables at once took the
peak to ~1 GB); a key none of whose problems passes still asks ``decide`` (dead or undecided,
and why): entry decisions 2.6-2.7 -> 1.5 s (in-process, quiet machine). The size findings
serialise each shared predicate once (the dumps 0.8 -> 0.47 s; findings 1.3-1.45 -> 0.9 s). Tried and left out: the witnesses in bulk
(canSolve of each entry's 64 witnesses in array passes): no faster, as most entries stop after a
few; their selections as one batch of the compiled library: 0.6 s less but 35 MB more (its
per-signature tables, the k-d tree's imports). Left: reading ~5.3 s, locating ~1.7 s, the
witnesses ~2.7 s (41 000 selections, 78 000 decisions), compiling the library ~0.4 s, imports.

Issue 33, lint's locating (helper "locate"; CPU seconds of the phase in-process, the tree before
and after alternately, 3 pairs, load average 1-2 on 2 CPUs): 0.78, 0.79, 0.86 -> 0.61, 0.59,
0.56 s, peak +3 MB (the kept cut), lint --json byte-identical (md5: rocBLAS_Full, KernelsLite*,
KernelsTileLite, SampleTensileKernels, the 16 YAML masters of masters/ and masters-hipblaslt/,
12 logic files). The text's top-level cut made while reading is kept (``yaml_codec.TextCut``, its
text's length and hash checked) and not made again (0.25 s). Left (CPU): the library piece's
line index 0.25 s (its per-line loop ~0.19 s; in numpy arrays 0.15 s: not worth a second path),
the cuts below 0.13 s (126 000 table rows cut to reach ~2 000), decoding the bytes again 0.04 s
(``read_bytes`` has already inflated them), walking the located slices 0.04 s.

Issue 33, lint (session 16; ``--no-plain --runs 1``, c3ada6c and main alternately, 2 pairs, load
average ~1 on 2 CPUs): lint 10.94, 11.04 -> 8.20, 8.51 s wall, peak 681-684 -> 698-701 MB; diff
7.26, 7.22 -> 6.67, 6.56 s, peak 735-739 -> 736-738 MB; findings identical (every master of the
corpus at witness spans 1, 2, 9 and 64; rocBLAS_Full at 1, 9 and 64). In-process CPU seconds:

* the shadowing witnesses 2.9 -> 1.2 s: every duplicate entry's witnesses asked at once, a round
  of steps at a time (1, 2-8, 9-64: most are decided by their first), canSolve in the table pass's
  array passes (``Linter._passes_in_bulk``), a witness whose kernel fails one of ``KEY_DECIDED``
  for all its problems found dead there (16 000 of 78 000), the passing ones selected by one
  ``find_batch`` per pass, the kernels of a key that pass its same problem once (58 500 -> 43 000
  selections); k-d tree ties whose 6 nearest all tie are asked again with 48 neighbours
  (``scan._resolve_among``: 16 300 one-by-one scans -> none). SciPy's import is 0.3 s of it.
* the table pass 1.55 -> 1.35 s: predicates of the problem type evaluated on the templates
  (``lint.tables._EntryColumns`` gives its type view, ``fast._vector_of`` keeps the answers on
  it: 7 160 of 19 400 evaluations), the kernels grouped by signature with one sort, the bases of
  one set of templates sharing one scratch copy;
* compiling the library 0.24 -> ~0.05 s of interning (a predicate object's atoms once), the
  unmodelled-predicate search 0.17 -> 0.09 s (each predicate object once);
* reading (helper "masterlines"): the master's solutions decoded once per distinct entry
  (``logic_lines.decode_items``: 51 000 distinct of 234 000 entries), 3.73 -> 3.29 s in the lint
  process. Its peak is that of the reading now (+~70 MB: the distinct entries' parse leaves the
  heap fragmented); the logic-file decoder shares the rule (3 largest logic files: 0.48 -> 0.52 s,
  ``bench/load.py`` 0.043 -> 0.046x).

Left (CPU, quiet machine, ~8.3 s in all): imports ~0.6 s, reading ~3.3 s (yaml_rs over the
library piece and the distinct entries ~1.1 s, the models ~0.9 s, distinct lines 0.4 s, the YAML
1.1 scan 0.26 s, the top-level cut 0.25 s), the table pass ~1.35 s, the witnesses ~1.2 s, the size
findings 0.55 s (a model_dump and msgpack of each solution), locating ~0.55 s.

The ratio column is figure / baseline wall time (memory: / baseline peak RSS). The machine may be
shared; the load average is printed first.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import tempfile
from pathlib import Path

from _corpus import corpus_path
from big_library import MIB, TK, measured, row

FOLDER = "masterlib/tensile/SolutionLibraries"
DIFF_GOAL, LINT_GOAL = 8.0, 10.0  # seconds (issue 33)


def figures(label: str, argv: list[str], runs: int, goal: float, *, with_baseline: bool = False) -> None:
    """Print wall, CPU and peak memory of ``argv`` beside the baseline (and the baseline first);
    ``goal``: seconds, wall on a quiet machine (CPU, user + system, is that figure on a busy one)."""
    wall, rss, base_wall, base_rss, cpu = measured(argv, runs)
    if with_baseline:
        print(row("baseline: python -c 'import yaml, msgpack'", f"{base_wall:.3f} s", 1.0, "", True))
        print(row("  its peak memory", f"{base_rss / MIB:.0f} MiB", 1.0, "", True))
    print(row(f"{label}: wall", f"{wall:.2f} s", wall / base_wall, f"<= {goal:g} s", wall <= goal))
    print(row("  CPU (user + system; the wall time of a quiet machine)", f"{cpu:.2f} s", cpu / base_wall, f"<= {goal:g} s", cpu <= goal))  # fmt: skip
    print(row("  peak memory", f"{rss / 1e6:.0f} MB", rss / base_rss, "<= 800 MB", rss <= 800e6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--no-plain", action="store_true", help="skip the runs on uncompressed copies")
    parser.add_argument("--only", choices=("diff", "lint"), help="run that command's rows alone")
    args = parser.parse_args()
    rows = {"diff", "lint"} if args.only is None else {args.only}
    folder = corpus_path(args.corpus, "masterlib") / FOLDER
    dat, yaml = folder / "rocBLAS_Full.dat.gz", folder / "rocBLAS_Full.yaml.gz"
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"{'figure':58s} {'value':>14s} {'/ baseline':>10s}  {'target':>14s}")
    diff = [*TK, "diff", str(dat), str(yaml)]
    lint = [*TK, "lint", str(yaml)]
    if "diff" in rows:
        figures("diff rocBLAS_Full .dat.gz against .yaml.gz", diff, args.runs, DIFF_GOAL, with_baseline=True)
    if "lint" in rows:
        figures("lint rocBLAS_Full.yaml.gz", lint, args.runs, LINT_GOAL, with_baseline="diff" not in rows)
    if args.no_plain:
        return
    with tempfile.TemporaryDirectory() as scratch:
        plain: list[Path] = []
        for packed in (dat, yaml):
            target = Path(scratch) / packed.name.removesuffix(".gz")
            with gzip.open(packed) as source, target.open("wb") as sink:
                shutil.copyfileobj(source, sink)
            plain.append(target)
        if "diff" in rows:
            figures("diff rocBLAS_Full .dat against .yaml (uncompressed)", [*TK, "diff", *map(str, plain)], args.runs, DIFF_GOAL)  # fmt: skip
        if "lint" in rows:
            figures("lint rocBLAS_Full.yaml (uncompressed)", [*TK, "lint", str(plain[1])], args.runs, LINT_GOAL)


if __name__ == "__main__":
    main()
