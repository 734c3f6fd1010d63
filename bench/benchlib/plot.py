"""The plot: p50 and p99 of each scenario against the number of memos, with the baselines."""

from __future__ import annotations

import os

from .driver import log
from .report import PLOT_SCENARIOS


def plot(results: dict, server_info: dict, results_dir: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("WARNING: matplotlib is missing; no plot (python3 -m pip install matplotlib)")
        return
    sizes = [int(s) for s in results["sizes"]]
    res = [results["sizes"][str(s)] for s in sizes]
    fig, axes = plt.subplots(1, 2, figsize=(15, 6.5), sharey=True)
    cmap = plt.get_cmap("tab20")
    for ax, stat, title in ((axes[0], "p50_ns", "p50"), (axes[1], "p99_ns", "p99")):
        for i, (key, label) in enumerate(PLOT_SCENARIOS.items()):
            ys = [r["scenarios"][key][stat] / 1000 for r in res]
            ax.plot(sizes, ys, marker="o", color=cmap(i % 20), label=label.strip(),
                    linestyle="--" if key.endswith("_list") else "-")
        for key, label, style, color in (("pipe_floor", "baseline: pipe floor (cat)", "--", "black"),
                                         ("pipe_100kb", "baseline: 100 KB line via cat", ":", "black"),
                                         ("fsync", "baseline: 4 KB write + fsync", "--", "grey"),
                                         ("sqlite_search_common", "baseline: SQLite direct, common term", "-.",
                                          "black")):
            if all(key in r["baselines"] for r in res):
                ax.plot(sizes, [r["baselines"][key][stat] / 1000 for r in res], linestyle=style, color=color,
                        linewidth=1.2, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.minorticks_off() if len(sizes) > 1 else None
        ax.set_xticklabels([f"{s // 1000}k" if s >= 1000 else str(s) for s in sizes])
        ax.set_xlabel("number of memos")
        ax.set_title(f"{title} latency per request")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("µs (log)")
    axes[1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    m = results["meta"]
    fig.suptitle(f"CloudNotes {server_info.get('version', '')} — commit {m['git_commit'][:10]} — {m['date']}",
                 fontsize=10)
    fig.tight_layout()
    path = os.path.join(results_dir, "latency.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    log(f"plot: {path}")
