"""The library of the CloudNotes benchmark (bench/README.md).

The server's benchmark, bench/cloudnotes_bench.py (which bench/run runs), in the order a run needs it:

    data        the memos, generated from a fixed seed, and the import file
    driver      a process on pipes: one round trip at a time, or pipelined
    stats       nearest-rank percentiles, and the figures and tables as printed
    stores      store files: removed, their unindexed memos counted; what a process wrote
    baselines   the same work without the server: through `cat`, on SQLite directly, a write and fsync
    session     a run's settings, its servers and its results so far
    sizes       each size's store, made before the scenarios; its last baselines and peak RSS, after them
    scenarios   start-up, select, list, search, typing and pipelined updates
    report      the tables of bench/results/latest.txt and stdout
    plot        bench/results/latency.png

bench/compare.py (binaries in turns): compare_base, then compare_requests, compare_bulk, compare_typing.
bench/frontend.py and bench/frontend_emacs.py: editor_result.
"""

import os

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(BENCH_DIR)
