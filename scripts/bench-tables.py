#!/usr/bin/env python3
"""Markdown tables of one `kache-bench run --json FILE`, for docs/PERFORMANCE.md
and the README, so that the documents carry the run's own figures.

    scripts/bench-tables.py FILE summary     one row per workload: its main figures and ratios
    scripts/bench-tables.py FILE details     a table per workload: every figure beside its baselines
    scripts/bench-tables.py FILE targets     the targets the run checked

Figures are the median of the runs, with the smallest and largest in
parentheses where they differ; a ratio is taken run by run, as kache-bench does.
"""
import json
import sys

# The figures the summary shows of each workload, in this order.
MAIN = {
    "W1": ["sets/s", "durable sets/s"],
    "W2": ["gets/s", "async gets/s", "p99 µs"],
    "W3": ["ops/s", "async ops/s"],
    "W4": ["sets/s"],
    "W4d": ["sets/s", "write amplification"],
    "W5": ["ms to ready", "cold gets/s", "keys lost"],
    "W6": ["MB/s written", "MB/s read"],
    "W7": ["ops/s"],
    "W8": ["durable sets/s", "allocated ÷ raw bytes", "ms to ready", "keys lost"],
    "W9": ["hit ratio"],  # beside S3-FIFO
}
# Left out of the detail tables (they are in the JSON): sizes every workload
# reports, and the latency percentiles the charts draw beside p99.
QUIET = {"peak RSS", "file bytes", "bytes on disk", "p50 µs", "p99.9 µs", "keys past their TTL", "wrong values"}


def number(value, unit):
    if value is None:
        return "–"
    if unit == "per second":
        for scale, suffix in ((1e6, "M/s"), (1e3, "k/s")):
            if abs(value) >= scale:
                return f"{significant(value / scale)} {suffix}"
        return f"{significant(value)}/s"
    if unit == "bytes":
        for scale, suffix in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if abs(value) >= scale:
                return f"{significant(value / scale)} {suffix}"
        return f"{value:.0f} B"
    if unit == "ms":
        return f"{significant(value)} ms"
    if unit == "count":
        return f"{value:,.0f}"
    return significant(value)


def significant(value, digits=3):
    if value == 0:
        return "0"
    text = f"{value:.{digits}g}"
    if "e" in text:
        text = f"{value:,.0f}"
    return text


def summary(samples, unit):
    ordered = sorted(samples)
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    text = number(median, unit)
    if len(ordered) > 1 and number(ordered[0], unit) != number(ordered[-1], unit):
        text += f" ({number(ordered[0], unit)} – {number(ordered[-1], unit)})"
    return text


def ratio(comparison, short=False):
    ratios = sorted(comparison["ratios"])
    if not ratios:
        return "–"
    middle = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
    text = f"**{significant(middle)}×**"
    if not short and len(ratios) > 1 and significant(ratios[0]) != significant(ratios[-1]):
        text += f" ({significant(ratios[0])} – {significant(ratios[-1])})"
    return text


def title(result):
    text = f"{result['workload']} {result['name']}"
    if result.get("variant"):
        text += f" ({result['variant']})"
    return text + f", {result['threads']} thread{'s' if result['threads'] != 1 else ''}"


def summary_table(report):
    lines = ["| workload | figure | Kache | beside | ratio |", "| --- | --- | --- | --- | --- |"]
    for result in report["results"]:
        wanted = MAIN.get(result["workload"])
        figures = [f for f in result["figures"] if wanted is None or f["name"] in wanted]
        if wanted is not None:
            figures.sort(key=lambda f: wanted.index(f["name"]))
        first = True
        for figure in figures:
            # W9's hit ratio beside S3-FIFO, the policy it follows; the others' first baseline.
            preferred = [c for c in figure["comparisons"] if c["baseline"] == "S3-FIFO"] or figure["comparisons"]
            comparison = preferred[0] if preferred else None
            lines.append("| {} | {} | {} | {} | {} |".format(
                title(result) if first else "", figure["name"], summary(figure["samples"], figure["unit"]).split(" (")[0],
                comparison["baseline"] if comparison else "", ratio(comparison, short=True) if comparison else "",
            ))
            first = False
    return "\n".join(lines)


def hit_ratios(results):
    """W9 in one table: Kache's hit ratio beside each simulated policy's, a row per trace, tier and budget."""
    baselines = [c["baseline"] for c in results[0]["figures"][0]["comparisons"]]
    out = ["#### W9 hit ratio", "", "| trace · tier · budget | Kache | " + " | ".join(baselines) + " |",
           "| --- | --- | " + " | ".join("---" for _ in baselines) + " |"]
    for result in results:
        figure = next(f for f in result["figures"] if f["name"] == "hit ratio")
        by_name = {c["baseline"]: summary(c["samples"], figure["unit"]) for c in figure["comparisons"]}
        out.append(f"| {result['variant']} | {summary(figure['samples'], figure['unit'])} | "
                   + " | ".join(by_name.get(b, "–") for b in baselines) + " |")
    return out + [""]


def details(report):
    """Every workload in one table, W9 in a table of its own."""
    out = ["| workload | figure | Kache | baseline | baseline's figure | ratio |", "| --- | --- | --- | --- | --- | --- |"]
    w9 = [r for r in report["results"] if r["workload"] == "W9"]
    for result in report["results"]:
        if result["workload"] == "W9":
            continue
        name = title(result)
        for figure in result["figures"]:
            if figure["name"] in QUIET:
                continue
            value = summary(figure["samples"], figure["unit"])
            if not figure["comparisons"]:
                out.append(f"| {name} | {figure['name']} | {value} | | | |")
                name = ""
            for index, comparison in enumerate(figure["comparisons"]):
                out.append("| {} | {} | {} | {} | {} | {} |".format(
                    name, figure["name"] if index == 0 else "", value if index == 0 else "", comparison["baseline"],
                    summary(comparison["samples"], figure["unit"]), ratio(comparison),
                ))
                name = ""
    out.append("")
    if w9:
        out += hit_ratios(w9)
    return "\n".join(out)


def targets(report):
    lines = ["| target | measured | |", "| --- | --- | --- |"]
    # W9's dozen (trace × tier × budget) in one row: each is in the JSON.
    w9 = [t for t in report.get("targets", []) if t["target"].startswith("W9 ")]
    if w9:
        met = sum(t["met"] for t in w9)
        lines.append(f"| W9 hit ratio ≥ S3-FIFO − 0.005 on traces (a) and (b), ≥ the better of S3-FIFO and earliest expiry on (c), "
                     f"each tier and budget | {met} of {len(w9)} | {'met' if met == len(w9) else '**missed**'} |")
    for target in report.get("targets", []):
        if target in w9:
            continue
        margin = target.get("margin")
        verdict = "met" if target["met"] else "**missed**"
        if margin:
            verdict += f", by {abs(margin) * 100:.0f} %" if target["met"] else f", short by {abs(margin) * 100:.0f} %"
        lines.append(f"| {target['target']} | {target['measured']} | {verdict} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("summary", "details", "targets"):
        sys.exit(__doc__)
    report = json.load(open(sys.argv[1]))
    print({"summary": summary_table, "details": details, "targets": targets}[sys.argv[2]](report))
