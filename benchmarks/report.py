"""Markdown / JSON / PNG output of one benchmark run."""
from __future__ import annotations

import json
import os


def _s(sec) -> str:
    if sec is None:
        return "—"
    if sec >= 1:
        return f"{sec:.2f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec * 1e6:.1f} µs"


def _r(x) -> str:
    return "—" if x is None else f"{x:.2f}x"


def _is_sw(name: str) -> bool:
    return name.startswith("sw-")


def goals_table(doc) -> list[str]:
    """The current targets: each ratio from its pairwise measurement (W3-mem: peak memory)."""
    out = ["| Workload | Target | StrideWeave | vs | Pairwise ratio | Rotation ratio | Limit | Result |",
           "|---|---|---|---|---:|---:|---:|:---:|"]
    for w in doc["workloads"]:
        for g in w.get("goals", []):
            ratio = _r(g["ratio"]) if g["ratio"] is not None else "error: " + (g.get("why") or "?").replace("|", "/")
            if g.get("method") == "memory":
                ratio = f"{ratio} (memory)"
            out.append(f"| {w['id']} | {g['label']} | {g['sw']} | {g['anchor']} | {ratio} | "
                       f"{_r(g.get('rotation_ratio'))} | <= {g['limit']:g}x | {'PASS' if g['met'] else '**MISS**'} |")
    return out


def pairs_table(w) -> list[str]:
    out = [("| StrideWeave | vs | rounds | StrideWeave median | anchor median | ratio of medians | "
            "median of round ratios |"), "|---|---|---:|---:|---:|---:|---:|"]
    for p in w.get("pairs", {}).values():
        if p["status"] != "ok":
            out.append(f"| {p['sw']} | {p['anchor']} | error: {p['error'].replace('|', '/')} | | | | |")
            continue
        out.append(f"| {p['sw']} | {p['anchor']} | {p['n']} | {_s(p['median_sw_s'])} | {_s(p['median_anchor_s'])} "
                   f"| {_r(p['ratio'])} | {_r(p['round_ratio_median'])} |")
    return out


def mem_table(w) -> list[str]:
    out = ["| input | measured by | status | peak | step time |", "|---|---|---|---:|---:|"]
    for r in w["rows"]:
        if r["status"] != "ok":
            out.append(f"| {r['variant']} | {r['mode']} | {r['status']}: {r.get('error', '')} | — | — |")
            continue
        out.append(f"| {r['variant']} | {r['mode']} | ok | {r['peak_mib']:.0f} MiB | {_s(r['seconds'])} |")
    for g in w.get("goals", []):
        out += ["", (f"Writable / read-only: {_r(g['ratio'])} (rss), {_r(g.get('tracemalloc_ratio'))} "
                     "(tracemalloc). Step time is that one call, first touches of fresh memory included: "
                     "not a timing result.")]
    return out


def targets_table(doc) -> list[str]:
    out = ["| Workload | Target | StrideWeave | vs | Ratio | Limit | Met |",
           "|---|---|---|---|---:|---:|:---:|"]
    for w in doc["workloads"]:
        for t in w.get("targets", []):
            met = "met" if t["met"] else "**NOT met**"
            ratio = _r(t["ratio"]) if t["ratio"] is not None else (t.get("why") or "—")
            limit = "—" if t["limit"] is None else f"<= {t['limit']:g}x"
            out.append(f"| {w['id']} | {t['label']} | {t['sw']} | {t['anchor']} | {ratio} | {limit} | {met} |")
    return out


def workload_table(w) -> list[str]:
    cs = w["contenders"]
    anchors = [n for n in cs if not _is_sw(n) and cs[n]["status"] == "ok"]
    per_op = w.get("ops")
    head = ["contender", "median"] + (["per-op"] if per_op else []) + [f"x {a}" for a in anchors]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 1 + "---:|" * (len(head) - 1)]
    for n, c in cs.items():
        if c["status"] != "ok":
            out.append(f"| {n} | error: {c['error'].replace('|', '/')} |" + " |" * (len(head) - 2))
            continue
        row = [f"**{n}**" if _is_sw(n) else n, _s(c["median_s"])]
        if per_op:
            row.append(_s(c["median_s"] / per_op))
        for a in anchors:
            row.append(_r(c["median_s"] / cs[a]["median_s"]) if _is_sw(n) else "")
        out.append("| " + " | ".join(row) + " |")
    return out


def w2_table(w) -> list[str]:
    out = ["| contender | status | time | peak RSS | RSS delta | time x torch | mem x torch |",
           "|---|---|---:|---:|---:|---:|---:|"]
    torch_row = next((r for r in w["rows"] if r["contender"] == "torch" and r["status"] == "ok"), None)
    for r in w["rows"]:
        if r["status"] != "ok":
            out.append(f"| {r['contender']} | {r['status']}: {r.get('error', '')} | — | — | — | — | — |")
            continue
        rt = rm = None
        if torch_row and _is_sw(r["contender"]):
            rt = r["seconds"] / torch_row["seconds"]
            rm = r["rss_delta_mib"] / max(torch_row["rss_delta_mib"], 1e-9)
        out.append(f"| {'**' + r['contender'] + '**' if _is_sw(r['contender']) else r['contender']} | ok | "
                   f"{_s(r['seconds'])} | {r['rss_peak_mib']:.0f} MiB | {r['rss_delta_mib']:.0f} MiB | "
                   f"{_r(rt)} | {_r(rm)} |")
    return out


def markdown(doc) -> str:
    env = doc["environment"]
    lines = [f"# StrideWeave benchmarks ({doc['mode']}, device={doc['device']})", "",
             (f"One run, {doc['elapsed_s']:.0f} s; python {env.get('python')}, numpy {env.get('numpy')}, "
              f"torch {env.get('torch')}, jax {env.get('jax')}, autograd {env.get('autograd')}, "
              f"strideweave {env.get('strideweave')} (git {env.get('git')}, working tree as found), "
              f"{env.get('cpus')} CPUs (load average at start: {env.get('loadavg_at_start')}), "
              "every backend single-threaded."),
             ("Ratios are StrideWeave median time / anchor median time from this run (lower is better; "
              "< 1 means StrideWeave is faster)."), "", "## Targets", "",
             ("Each ratio is measured pairwise: the StrideWeave contender and its anchor alone in the "
              "process, alternating (A, B, then B, A) round by round; ratio = median of A / median of B. "
              "`Rotation ratio` is the same pair's ratio in the workload's rotation over all contenders, "
              "for comparison. W3-mem compares peak memory, not time."), ""]
    lines += goals_table(doc)
    lines += ["", "## Earlier targets (rotation medians)", ""]
    lines += targets_table(doc)
    for w in doc["workloads"]:
        lines += ["", f"## {w['id']}: {w['title']}", ""]
        if w["id"] == "W2":
            lines += w2_table(w)
        elif w["id"] == "W3-mem":
            lines += mem_table(w)
        else:
            lines.append(f"Median of {w['repeats']} interleaved rounds.")
            lines.append("")
            lines += workload_table(w)
            if w.get("pairs"):
                lines += ["", "Pairwise (each pair alone, alternating):", ""]
                lines += pairs_table(w)
        for n in w.get("notes", []):
            lines += ["", f"_{n}_"]
    return "\n".join(lines) + "\n"


def chart(doc, path: str) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except Exception:
        return None
    ws = [w for w in doc["workloads"] if w["id"] != "W3-mem"]   # memory, not time
    if not ws:
        return None
    cols = 3
    rows = (len(ws) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.2 * rows), squeeze=False)
    for ax, w in zip(axes.flat, ws):
        if w["id"] == "W2":
            items = [(r["contender"], r["seconds"]) for r in w["rows"] if r["status"] == "ok"]
        else:
            items = [(n, c["median_s"]) for n, c in w["contenders"].items() if c["status"] == "ok"]
        names = [n for n, _ in items]
        vals = [v for _, v in items]
        colors = ["tab:orange" if _is_sw(n) else "tab:blue" for n in names]
        ax.barh(range(len(vals)), vals, color=colors)
        ax.set_yticks(range(len(vals)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("seconds (median, log)", fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(w["id"] + ": " + w["title"][:48], fontsize=8)
    for ax in list(axes.flat)[len(ws):]:
        ax.axis("off")
    fig.suptitle("StrideWeave (orange) vs anchors (blue), single-threaded CPU", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_all(doc, out_dir: str) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    md = os.path.join(out_dir, "results.md")
    js = os.path.join(out_dir, "results.json")
    with open(md, "w") as f:
        f.write(markdown(doc))
    with open(js, "w") as f:
        json.dump(doc, f, indent=1, default=str)
    paths = [md, js]
    png = chart(doc, os.path.join(out_dir, "results.png"))
    if png:
        paths.append(png)
    return paths


if __name__ == "__main__":   # re-render results.md / results.png from a results.json
    import sys
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join("benchmarks", "results", "results.json")
    with open(src) as f:
        d = json.load(f)
    print("\n".join(write_all(d, os.path.dirname(src) or ".")))
