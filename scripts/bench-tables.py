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
    "W8": ["durable sets/s", "allocated ÷ raw", "ms to ready", "keys lost"],
    "W9": None,  # every hit ratio
}
# Left out of the detail tables: the same for every workload, and in the JSON.
QUIET = {"peak RSS", "file bytes"}


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
            comparison = figure["comparisons"][0] if figure["comparisons"] else None
            lines.append("| {} | {} | {} | {} | {} |".format(
                title(result) if first else "", figure["name"], summary(figure["samples"], figure["unit"]).split(" (")[0],
                comparison["baseline"] if comparison else "", ratio(comparison, short=True) if comparison else "",
            ))
            first = False
    return "\n".join(lines)


def details(report):
    out = []
    for result in report["results"]:
        out.append(f"#### {title(result)}")
        out.append("")
        out.append("| figure | Kache | baseline | baseline's figure | ratio |")
        out.append("| --- | --- | --- | --- | --- |")
        for figure in result["figures"]:
            if figure["name"] in QUIET:
                continue
            value = summary(figure["samples"], figure["unit"])
            if not figure["comparisons"]:
                out.append(f"| {figure['name']} | {value} | | | |")
            for index, comparison in enumerate(figure["comparisons"]):
                out.append("| {} | {} | {} | {} | {} |".format(
                    figure["name"] if index == 0 else "", value if index == 0 else "", comparison["baseline"],
                    summary(comparison["samples"], figure["unit"]), ratio(comparison),
                ))
        out.append("")
    return "\n".join(out)


def targets(report):
    lines = ["| target | measured | |", "| --- | --- | --- |"]
    for target in report.get("targets", []):
        margin = target.get("margin")
        verdict = "met" if target["met"] else "**missed**"
        if margin is not None:
            verdict += f", by {abs(margin) * 100:.0f} %" if target["met"] else f", short by {abs(margin) * 100:.0f} %"
        lines.append(f"| {target['target']} | {target['measured']} | {verdict} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("summary", "details", "targets"):
        sys.exit(__doc__)
    report = json.load(open(sys.argv[1]))
    print({"summary": summary_table, "details": details, "targets": targets}[sys.argv[2]](report))
