"""What the classroom prints: one table per classroom, the goals table at the largest N, the page-speed table.

Every figure comes from a classroom's results and their summary
(``measurements.summarise``) or from the page-speed phase's results; a figure
that was not measured prints as "–", a missed goal as "NOT MET".
"""

from __future__ import annotations

import math

import psutil

from benchmarks.serving.clients import TIMEOUT
from benchmarks.serving.measurements import LEFTOVER_SECONDS, median, session_index, summarise
from benchmarks.serving.page_speed import PAGE_SPEED_GOALS

#: The issue's goals: click-to-effect p95 (s), page load (s), served / headless throughput, the server's memory
#: departure over the soak and the others' slowdown during the over-budget request (fractions).
GOALS = {"click_p95": 1.0, "page_load": 5.0, "ratio": 0.8, "memory": 0.10, "slowdown": 0.20}


def fmt(value: float, digits: int = 2, unit: str = "") -> str:
    """``value`` with ``digits`` decimals and ``unit``; "–" when it was not measured (None or nan)."""
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}{unit}"


def print_page_speed(result: dict) -> None:
    """The page-speed phase's table, the goals beside the measurements."""
    first, later = PAGE_SPEED_GOALS["first"], PAGE_SPEED_GOALS["later"]

    def spread(rows: list[tuple[float, float]], index: int) -> str:
        values = [row[index] for row in rows]
        shown = [value for value in values if value == value]
        return (f"{fmt(median(values))} / {fmt(max(values))}" if len(shown) == len(values)
                else f"{fmt(median(shown))} / not shown in {len(values) - len(shown)} of {len(values)} pages "
                     f"within {TIMEOUT:.0f} s")

    print(f"\n== page speed (a fresh server; {PAGE_SPEED_GOALS}) ==")
    if "first" in result:
        to_start, to_plot, open_start, open_plot = result["first"]
        print(f"server start → it answers (s)                      {result['answers']:6.2f}")
        print(f"server start → first page's Start button (s)       {to_start:6.2f}   (goal < {first:.0f} s: "
              f"{'met' if to_start < first else 'NOT MET'});  from the page's opening {open_start:.2f}")
        print(f"server start → first page's first lattice (s)      {to_plot:6.2f}   "
              f"(from the page's opening {open_plot:.2f})")
    for label, rows in ((f"{len(result['sequential'])} later pages, one after the other", result["sequential"]),
                        (f"{len(result['burst'])} later pages opened at once", result["burst"])):
        if rows:
            worst = max(row[0] for row in rows)
            print(f"{label}: page opened → Start button (s), median / worst   {spread(rows, 0)}   "
                  f"(goal < {later:.0f} s: {'met' if worst < later else 'NOT MET'})")
            print(f"{' ' * len(label)}  page opened → first lattice (s), median / worst   {spread(rows, 1)}")
    if result.get("burst_cpu"):
        cpu = result["burst_cpu"]
        cores = psutil.cpu_count() or 1
        print(f"CPU seconds the {len(result['burst'])} pages at once took, until each drew its lattice: "
              + ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu.items())
              + f" (on {cores} cores at least {sum(cpu.values()) / cores:.1f} s of wall time)")
    if result.get("light_burst"):
        opened = result["light_burst"]
        print(f"{len(opened)} light clients at once (the server's share: request → document pulled) (s), "
              f"median / worst   {fmt(median(opened))} / {fmt(max(opened))}   "
              f"(goal < {later:.0f} s: {'met' if max(opened) < later else 'NOT MET'})")
    if result.get("log_errors"):
        print(f"server log errors: {'; '.join(result['log_errors'][:3])}")


def print_table(result: dict, summary: dict) -> None:
    """One classroom's table (every measurement of one N), its problems (failed sessions, errors, processes
    left), and each session's steps/s served beside headless."""
    rows = (_session_rows(result, summary) + _budget_rows(result, summary) + _memory_rows(result)
            + _leftover_rows(result))
    width = max(len(label) for label, _ in rows)
    print(f"\nN = {result['n']} concurrent sessions")
    print("-" * (width + 60))
    for label, value in rows:
        print(f"{label:{width}s}  {value}")
    _print_problems(result)
    _print_per_session(result)


def _session_rows(result: dict, summary: dict) -> list[tuple[str, str]]:
    """The table's rows on the sessions: how many ran, page loads, clicks, throughput served / headless, CPU."""
    n = result["n"]
    rows = [
        ("sessions (Chromium pages + light clients)", f"{n} ({result['pages']} + {result['lights']})"),
        ("sessions running during the window", f"{result.get('running', 0)} / {n}"),
        ("page load → first drawn lattice (s): median / max",
         f"{fmt(summary['load_median'])} / {fmt(summary['load_max'])}   ({len(result.get('page_load', []))} pages)"),
    ]
    if result.get("light_open"):
        opened = [s for s in result["light_open"] if s == s]
        rows.append(("light client: GET + pull document (s): median / max",
                     f"{fmt(median(opened))} / {fmt(max(opened or [math.nan]))}   "
                     f"(all up and running after {result.get('lights_seconds', math.nan):.0f} s)"))
    rows += [
        ("click Start → running (s): median / p95",
         f"{fmt(summary['start_median'], 3)} / {fmt(summary['start_p95'], 3)}   "
         f"({len(result.get('start', []))} clicks)"),
        ("click Pause → paused (s): median / p95",
         f"{fmt(summary['pause_median'], 3)} / {fmt(summary['pause_p95'], 3)}   ({len(result.get('pause', []))} clicks;"
         f" all clicks: {result.get('click_timeouts', 0)} without effect in {result.get('click_timeout', '?')} s, "
         f"{result.get('click_skipped', 0)} skipped" + ("; stopped at the phase's time cap)" if result.get(
             "clicks_capped") else ")")),
        ("total steps/s served", f"{summary['served_total']:,.0f}"),
        ("total steps/s headless, same presets, N processes", f"{summary['headless_total']:,.0f}"),
        ("ratio served / headless (total)", fmt(summary["ratio"])),
        ("ratio served / headless, median over sessions", fmt(summary["ratio_median"])),
        ("ratio served / headless on the CPU the clients leave",
         f"{fmt(summary['ratio_left'])}   (headless steps per CPU-second × the {summary['cpu_left']:.0f} % of a core "
         "not used by Chromium, the light clients and other programs)"),
        ("CPU of the samplers: workers served / headless processes (%)",
         f"{result.get('cpu', {}).get('workers', math.nan):.0f} / {result.get('headless_cpu', math.nan):.0f}"),
        ("steps per CPU-second of the samplers: served / headless",
         f"{summary['served_per_cpu']:,.0f} / {summary['headless_per_cpu']:,.0f}  (ratio "
         f"{fmt(summary['served_per_cpu'] / summary['headless_per_cpu'])})"),
    ]
    if result.get("light_updates"):
        rows.append(("light clients: status updates/s received, median (total MB/s)",
                     f"{median(result['light_updates']):.1f}  ({result['light_bytes'] / 1e6:.2f} MB/s)"))
    cpu = result.get("cpu", {})
    if cpu:
        rows.append(("CPU during the window (% of one core; 200 = both)",
                     ", ".join(f"{group} {value:.0f}" for group, value in sorted(cpu.items(), key=lambda x: -x[1]))))
    return rows


def _budget_rows(result: dict, summary: dict) -> list[tuple[str, str]]:
    """The table's rows on the over-budget request: its message, the others' steps/s and the CPU before and after."""
    rows = []
    if "budget_message" in result:
        rows.append(("over budget: message shown after (s)", f"{result['budget_message_seconds']:.2f}: "
                                                              f"\"{result['budget_message'][:110]}…\""))
        rows.append(("over budget: others' steps/s before → after",
                     f"{result['budget_before']:,.0f} → {result['budget_after']:,.0f}  "
                     f"(slowdown {100 * summary['slowdown']:.1f} %)"))
        cpu0, cpu1, other = result["budget_cpu_before"], result["budget_cpu_after"], "everything else on the machine"
        rows.append(("  CPU of workers / of other programs on the machine, before → after (%)",
                     f"{cpu0.get('workers', 0):.0f} / {cpu0[other]:.0f} → "
                     f"{cpu1.get('workers', 0):.0f} / {cpu1[other]:.0f}"))
    elif "budget_error" in result:
        rows.append(("over budget", f"FAILED: {result['budget_error']}"))
    return rows


def _memory_rows(result: dict) -> list[tuple[str, str]]:
    """The table's rows on memory: over the soak (and the throughput's drift), or at the end without one."""
    rows, mb = [], 1e6
    soak = result.get("soak")
    if soak:
        s, w, p = soak["server"], soak["workers_rss"], soak["workers_pss"]
        rows += [
            (f"server RSS over {soak['seconds']:.0f} s (MB): first / last / max",
             f"{s['first'] / mb:.0f} / {s['last'] / mb:.0f} / {s['max'] / mb:.0f}  "
             f"(last {100 * s['change']:+.1f} %, widest {100 * s['spread']:.1f} %)"),
            ("workers RSS sum (MB): first / last / max",
             f"{w['first'] / mb:.0f} / {w['last'] / mb:.0f} / {w['max'] / mb:.0f}  ({100 * w['change']:+.1f} %; "
             f"{min(soak['workers'])}–{max(soak['workers'])} workers)"),
            ("workers PSS sum (MB): first / last / max of the two",
             f"{p['first'] / mb:.0f} / {p['last'] / mb:.0f} / {p['max'] / mb:.0f}  ({100 * p['change']:+.1f} %)"),
            ("total steps/s, first vs last quarter of the soak",
             f"{soak['rate_early']:,.0f} → {soak['rate_late']:,.0f}"),
        ]
        drops = sorted(((late / early, key) for key, (early, late) in soak.get("per_session", {}).items()
                        if early > 0 and late == late), key=lambda item: item[0])[:3]
        if drops:
            rows.append(("  sessions that slowed most (last / first quarter)",
                         ", ".join(f"{key} ×{ratio:.2f}" for ratio, key in drops)))
    else:
        now = result.get("memory_now", {})
        if now:
            rows.append(("server RSS / workers RSS sum (MB) at the end",
                         f"{now['server'] / mb:.0f} / {now['workers_rss'] / mb:.0f}  ({now['workers']} workers)"))
    return rows


def _leftover_rows(result: dict) -> list[tuple[str, str]]:
    """The table's rows on what was left (processes after closing and after the server stopped) and the errors."""
    rows = []
    left = result.get("workers_left", math.nan)
    rows.append((f"worker processes left {LEFTOVER_SECONDS:.0f} s after all sessions closed",
                 f"{left} of {result.get('workers_before_close', '?')}" + _gone(result)))
    rows.append(("processes of the server's tree left after it stopped",
                 f"{len(result.get('left_after_stop', []))}  (server stopped by {result.get('server_stop')})"))
    rows.append(("server log: errors / tracebacks", str(len(result.get("log_errors", [])))))
    rows.append(("JavaScript errors in the pages", str(len(result.get("js_errors", [])))))
    return rows


def _print_problems(result: dict) -> None:
    """The classroom's problems, one a line (the first 25): failed sessions, headless errors, leftovers, errors."""
    problems = (result.get("light_failed", []) + result.get("page_failed", []) + result.get("headless_errors", [])
                + [f"left after stop: {p}" for p in result.get("left_after_stop", [])]
                + [f"server log: {e}" for e in _distinct(result.get("log_errors", []))]
                + [f"JS: {e}" for e in _distinct(result.get("js_errors", []))])
    for problem in problems[:25]:
        print(f"  ! {problem[:300]}")
    if len(problems) > 25:
        print(f"  ! … and {len(problems) - 25} more")


def _print_per_session(result: dict) -> None:
    """Each session's steps/s served beside its preset's headless steps/s."""
    n = result["n"]
    presets = result.get("session_presets", {})
    served, headless = result.get("served", {}), result.get("headless", [])
    if served:
        print("  per session: steps/s served / headless (preset)")
        pages = result["pages"]
        index = session_index(n, pages)
        for key in sorted(served, key=lambda k: index.get(k, 0)):
            i = index.get(key, 0)
            h = headless[i] if i < len(headless) else math.nan
            print(f"    {key:9s} {served[key]:9.1f} / {h:9.1f}  {presets.get(key, '')[:70]}")


def _gone(result: dict) -> str:
    """When the leftover workers went, when some were left."""
    gone = result.get("workers_gone_after")
    if gone is None:
        return ""
    return f"  (all gone {gone:.0f} s after closing)" if gone != math.inf else "  (still there 40 s after closing)"


def _distinct(lines: list[str]) -> list[str]:
    """``lines`` without repeats, each repeated one with its count."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [f"{line} (×{count})" if count > 1 else line for line, count in counts.items()]


def print_goals(result: dict, summary: dict) -> None:
    """The goals table: each goal beside what the classroom ``result`` measured, met, not met or not measured."""
    n = result["n"]
    soak = result.get("soak")
    rows = []

    def goal(label: str, measured: str, target: str, met: bool | None) -> None:
        rows.append((label, measured, target, "met" if met else "NOT MET" if met is not None else "not measured"))

    p95 = max(summary["start_p95"], summary["pause_p95"]) if result.get("start") and result.get("pause") else math.nan
    goal("click-to-effect p95 (Start and Pause)", f"{fmt(summary['start_p95'], 3)} / {fmt(summary['pause_p95'], 3)} s",
         f"< {GOALS['click_p95']} s",
         None if math.isnan(p95) else (p95 < GOALS["click_p95"] and not result["click_timeouts"]
                                      and not result["click_skipped"]))
    goal("page load → first drawn lattice (worst page)", f"{fmt(summary['load_max'])} s", f"< {GOALS['page_load']} s",
         None if summary["load_max"] != summary["load_max"] else summary["load_max"] < GOALS["page_load"])
    goal("total throughput served / headless", fmt(summary["ratio"]), f">= {GOALS['ratio']}",
         None if summary["ratio"] != summary["ratio"] else summary["ratio"] >= GOALS["ratio"])
    goal("  the same, on the CPU the benchmark's clients leave", fmt(summary["ratio_left"]), f">= {GOALS['ratio']}",
         None if summary["ratio_left"] != summary["ratio_left"] else summary["ratio_left"] >= GOALS["ratio"])
    goal("all sessions loaded, built their preset and ran", f"{result.get('running', 0)} / {n}", f"{n} / {n}",
         result.get("running", 0) == n)
    left, stopped = result.get("workers_left"), len(result.get("left_after_stop", []))
    goal("processes left 10 s after close / after server stop", f"{left} / {stopped}", "0 / 0",
         None if left is None else (left == 0 and stopped == 0))
    if soak:
        goal(f"server memory flat over {soak['seconds']:.0f} s (widest departure from first)",
             f"{100 * soak['server']['spread']:.1f} %", f"<= {100 * GOALS['memory']:.0f} %",
             soak["server"]["spread"] <= GOALS["memory"])
    else:
        goal("server memory flat over the soak", "–", f"<= {100 * GOALS['memory']:.0f} %", None)
    goal("over-budget session gets a message", "yes" if "budget_message" in result else "no", "yes",
         "budget_message" in result)
    goal("others' slowdown meanwhile", f"{fmt(100 * summary['slowdown'], 1)} %", f"<= {100 * GOALS['slowdown']:.0f} %",
         None if summary["slowdown"] != summary["slowdown"] else summary["slowdown"] <= GOALS["slowdown"])
    goal("server log free of errors", str(len(result.get("log_errors", []))), "0", not result.get("log_errors"))
    print(f"\nGoals at N = {n}")
    widths = [max(len(row[i]) for row in rows + [("goal", "measured", "target", "")]) for i in range(4)]
    print(f"{'goal':{widths[0]}s}  {'measured':{widths[1]}s}  {'target':{widths[2]}s}  result")
    print("-" * (sum(widths) + 8))
    for row in rows:
        print(f"{row[0]:{widths[0]}s}  {row[1]:{widths[1]}s}  {row[2]:{widths[2]}s}  {row[3]}")


def print_all(results: list[dict], speed: dict | None) -> None:
    """Below everything: every classroom's table again, the goals at the largest N, and the page-speed table
    again (``speed``, when the phase ran)."""
    if results:
        print("\n== all classrooms ==")
        for result in results:
            print_table(result, summarise(result))
        largest = max(results, key=lambda r: r["n"])
        print_goals(largest, summarise(largest))
    if results and speed is not None:
        print_page_speed(speed)  # again, below the classrooms' tables
