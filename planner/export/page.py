"""`plan solve --report OUT.html`: one self-contained HTML file (plotly.js inlined, nothing
fetched when it is viewed) with the plan's headline, warnings, order sheet and charts: a
Gantt of workloads by card pool, cards held vs used per pool, spend per month as cash and
by use, and the cost breakdown.

Plotly rather than Vega-Altair: one pure-Python dependency whose wheel carries plotly.js,
so an offline page needs nothing else (Altair's offline HTML needs vl-convert, a bundled
JavaScript runtime, on top), and its figures are plain data a test can read back."""

from __future__ import annotations

import datetime as dt
import html
import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from planner.domain.costs import PRICED, CostTerm
from planner.domain.plan import Plan
from planner.domain.timeaxis import TimeAxis
from planner.explain.conflict import plural
from planner.views import (
    STORAGE,
    order_sheet,
    pool_hours,
    spend_by_use,
    spend_by_workload,
    without_packages,
)

CHARTS = ("gantt", "capacity", "monthly", "breakdown")


def _figure_html(fig: go.Figure, div_id: str) -> str:
    fig.update_layout(margin={"l": 40, "r": 20, "t": 50, "b": 40}, template="plotly_white")
    return str(fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, validate=False))


def _gantt(plan: Plan) -> go.Figure:
    """One bar per train run and per replica run, by workload, coloured by card pool."""
    bars: dict[str, dict[str, list[Any]]] = {}

    def add(pool: str, workload: str, start: dt.datetime, end: dt.datetime, text: str) -> None:
        b = bars.setdefault(pool, {"y": [], "base": [], "x": [], "text": []})
        b["y"].append(workload)
        b["base"].append(start.isoformat())
        # milliseconds on a date axis, by the instant (wall-clock subtraction of one zone's
        # times is wrong across a clock change)
        b["x"].append((end.timestamp() - start.timestamp()) * 1000)
        b["text"].append(text)

    for a in plan.train:
        for run in a.runs:
            add(f"{a.card} {a.mode}", a.workload, run.start, run.end, f"{a.cards}× {a.card}")
    for ra in plan.replica:
        for u in ra.uses:
            add(f"{u.card} {u.mode}", ra.workload, u.start, u.end, f"{u.replicas}× {u.cards}")
    fig = go.Figure()
    for pool in sorted(bars):
        b = bars[pool]
        fig.add_trace(
            go.Bar(
                name=pool, orientation="h", y=b["y"], x=b["x"], base=b["base"],
                hovertext=b["text"], hoverinfo="text+name",
            )
        )  # fmt: skip
    fig.update_layout(title="Workloads by card pool over time", barmode="overlay")
    fig.update_xaxes(type="date")
    fig.update_yaxes(autorange="reversed")
    return fig


MODE_COLOURS = {"hourly": "#4c78a8", "spot": "#f58518", "daily": "#54a24b",
                "weekly": "#b279a2", "monthly": "#e45756"}  # fmt: skip


def _capacity(axis: TimeAxis, plan: Plan) -> go.Figure:
    """Cards held (dotted) and used (filled) per billing mode, one panel per card type."""
    times = [axis.instant(h).isoformat() for h in range(axis.hours)]
    pools = pool_hours(axis, plan)
    cards = sorted({p.card for p in pools})
    fig = make_subplots(rows=len(cards), cols=1, shared_xaxes=True, subplot_titles=cards,
                        vertical_spacing=0.25 / max(len(cards), 1))  # fmt: skip
    shown: set[str] = set()
    for p in pools:
        row, colour = cards.index(p.card) + 1, MODE_COLOURS.get(p.mode, "#888")
        first = p.mode not in shown
        shown.add(p.mode)
        fig.add_trace(go.Scatter(x=times, y=p.used, name=f"used · {p.mode}", fill="tozeroy",
                                 mode="lines", line={"width": 0.5, "color": colour},
                                 legendgroup=p.mode, showlegend=first), row=row, col=1)  # fmt: skip
        fig.add_trace(go.Scatter(x=times, y=p.held, name=f"held · {p.mode}", mode="lines",
                                 line={"dash": "dot", "color": colour}, legendgroup=p.mode,
                                 showlegend=first), row=row, col=1)  # fmt: skip
    title = "Cards held (dotted) and used (filled) per card type: the gap is idle"
    fig.update_layout(title=title, height=max(360, 170 * len(cards)))
    return fig


def _monthly(axis: TimeAxis, plan: Plan) -> go.Figure:
    assert plan.cost_breakdown is not None
    cash = plan.cost_breakdown.by_month
    use = spend_by_use(axis, plan)
    months = sorted(cash.keys() | use.keys())
    fig = go.Figure()
    fig.add_trace(go.Bar(name="cash (a rental in its start month)", x=months,
                         y=[float(cash.get(m, 0)) for m in months]))  # fmt: skip
    fig.add_trace(go.Bar(name="by use (spread over the hours held)", x=months,
                         y=[float(use.get(m, 0)) for m in months]))  # fmt: skip
    fig.update_layout(title=f"Spend per month ({plan.currency})", barmode="group")
    fig.update_xaxes(type="category")  # "2026-07" is a month, not a day
    return fig


def _breakdown(plan: Plan) -> go.Figure:
    b = plan.cost_breakdown
    assert b is not None
    names = [f"paid: {t.value.replace('_', ' ')}" for t in b.paid]
    values = [float(v) for v in b.paid.values()]
    for t in PRICED:
        names.append(f"of which {t.value.replace('_', ' ')}")
        values.append(float(b.reported[t].cost or 0))
    fig = go.Figure(go.Bar(x=values, y=names, orientation="h"))
    fig.update_layout(title=f"Cost breakdown ({plan.currency})")
    fig.update_yaxes(autorange="reversed")
    return fig


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _workloads(plan: Plan) -> list[str]:
    """Each workload's cost as every view states it (held cards charged by cause) and its
    share, its spend by use beside it, and their totals (the plan's); with `--margins`, what
    the plan would cost less without each workload (at least, at most)."""
    c = plan.currency
    total = plan.total_cost or 1
    margin = {m.workload: m for m in plan.margins}
    header = ["workload", "kind", f"cost ({c})", "share", f"by use ({c})"]
    if margin:
        header += [f"without it, at least ({c}) less", f"at most ({c}) less"]
    rows = []
    spends = spend_by_workload(plan)
    for w in spends:
        row = [w.workload, w.kind, _money(w.cost), f"{w.cost / total:.0%}", _money(w.by_use)]
        if margin:
            m = margin.get(w.workload)
            row += [_money(m.at_least if m else None), _money(m.at_most if m else None)]
        rows.append(row)
    spent = sum((w.cost for w in spends), Decimal(0))
    used = sum((w.by_use for w in spends), Decimal(0))
    rows.append(["total", "", _money(spent), "", _money(used), *([""] * (len(header) - 5))])
    return ["<h2>Workloads</h2>", _table(header, rows)]


def _money(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def gap_words(plan: Plan) -> str:
    """The plan's standing in plain words."""
    c = plan.currency
    alone = without_packages(plan)
    also = "" if alone is None else f" Without packages: {alone}."
    if plan.status == "optimal":
        return f"Proven optimal: no plan costs less than {c} {_money(plan.total_cost)}.{also}"
    if plan.bound is None:
        return "Not proven: the solver found no lower bound in the time limit."
    return (
        f"Not proven optimal: no plan can cost less than {c} {_money(plan.bound)}, so at most "
        f"{c} {_money(plan.total_cost - plan.bound)} ({plan.gap or 0:.1%}) could still be "
        f"saved.{also}"
    )


STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1500px;color:#222}
h1{font-size:1.6em} table{border-collapse:collapse;font-size:.9em;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left} th{background:#f3f3f3}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1.5em} .side{color:#555}
.warn{background:#fff4e0;border-left:4px solid #e69500;padding:.4em .8em;margin:.4em 0}
"""

# After the charts are drawn: count each one's plotted points into the page (a browser test
# reads them back from the rendered page).
CHECK = """
window.addEventListener('load', function () {
  var out = {};
  document.querySelectorAll('.js-plotly-plot').forEach(function (el) {
    out[el.id] = (el.data || []).reduce(function (n, t) {
      return n + ((t.x && t.x.length) || 0);
    }, 0);
  });
  document.body.setAttribute('data-charts', JSON.stringify(out));
});
"""


def _body(axis: TimeAxis, plan: Plan, warnings: Sequence[str], prefix: str = "") -> list[str]:
    """The report of one plan as HTML parts; chart ids carry `prefix` (two plans, one page)."""
    c = plan.currency
    lines = order_sheet(axis, plan)
    total = sum((o.cost for o in lines), Decimal(0))
    orders = _table(
        ("offer", "card", "mode", "units held", "from", "to", "for", "rentals", f"cost ({c})"),
        [
            (o.offer, o.card, o.mode + (" (committed)" if o.committed else ""), o.pattern,
             f"{o.first:%Y-%m-%d %H:%M}", f"{o.last:%Y-%m-%d %H:%M}", o.workload or "(shared)",
             o.rentals if o.mode != STORAGE else "-", _money(o.cost))
            for o in lines
        ]
        + [("total", *[""] * 7, _money(total))],
    )  # fmt: skip
    savings = [
        f"{label} plan: {c} {_money(cost)}, saving {c} {_money(cost - plan.total_cost)}"
        if cost is not None
        else f"{label} plan: none ({plan.baseline_notes.get(label, 'not computed')})"
        for label, cost in (("naive", plan.naive_cost), ("heuristic", plan.heuristic_cost))
    ]
    figures = (_gantt(plan), _capacity(axis, plan), _monthly(axis, plan), _breakdown(plan))
    charts = [_figure_html(f, prefix + name) for f, name in zip(figures, CHARTS, strict=True)]
    idle = plan.cost_breakdown.reported[CostTerm.IDLE].cost if plan.cost_breakdown else None
    return [
        f"<h1>{html.escape(plan.scenario)}: {c} {_money(plan.total_cost)}</h1>",
        f"<p>{html.escape(gap_words(plan))}</p>",
        "<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in savings) + "</ul>",
        f"<p>Idle package and committed cards cost {c} {_money(idle)}.</p>",
        *(f'<div class="warn">{html.escape(w)}</div>' for w in warnings),
        f"<h2>What to order ({plural(len(lines), 'line')} for "
        f"{plural(len(plan.rentals), 'rental')})</h2>",
        orders,
        *_workloads(plan),
        *(f"<div>{chart}</div>" for chart in charts),
        "<h2>Package decisions</h2>",
        "<ul>" + "".join(f"<li>{html.escape(d)}</li>" for d in plan.decisions) + "</ul>",
        "<h2>Assumed or low-confidence figures behind the plan</h2>",
        "<ul>" + "".join(f"<li>{html.escape(a)}</li>" for a in plan.assumptions) + "</ul>",
        "<p>Every rule and cost line of this plan was recomputed by gpuplan's independent "
        "checker.</p>",
    ]


def _page(title: str, parts: Sequence[str], summary: dict[str, Any]) -> str:
    data = json.dumps(summary).replace("</", "<\\/")
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
        f"<script>{get_plotlyjs()}</script></head><body>"
        + "\n".join(parts)
        + f"<script>{CHECK}</script>"
        + f'<script type="application/json" id="plan-summary">{data}</script>'
        + "</body></html>"
    )


def render(axis: TimeAxis, plan: Plan, warnings: Sequence[str] = ()) -> str:
    """The report page of one plan as one HTML string."""
    return _page(f"gpuplan: {plan.scenario}", _body(axis, plan, warnings), _summary(plan))


def render_whatif(
    change: Sequence[str],
    delta_text: str,
    sides: Sequence[tuple[str, TimeAxis, Plan, Sequence[str]]],
    rows: Sequence[tuple[str, Sequence[Sequence[Any]]]],
) -> str:
    """A what-if page: the delta and the money tables on top, then base and variant side by
    side (label, axis, plan, warnings each)."""
    c = sides[0][2].currency
    parts = [
        f"<h1>What if {html.escape(' '.join(change))}</h1>",
        f"<p><b>{html.escape(delta_text)}</b></p>",
        *(
            f"<h2>{html.escape(title)}</h2>"
            + _table((title.split()[-1], "base", "variant", f"delta ({c})"), table)
            for title, table in rows
        ),
        '<div class="pair">'
        + "".join(
            f'<section><h2 class="side">{html.escape(label)}</h2>'
            + "\n".join(_body(axis, plan, warnings, prefix=f"{label}-"))
            + "</section>"
            for label, axis, plan, warnings in sides
        )
        + "</div>",
    ]
    return _page("gpuplan what-if", parts, {"sides": [_summary(p) for _, _, p, _ in sides]})


def _summary(plan: Plan) -> dict[str, Any]:
    return {"scenario": plan.scenario, "currency": plan.currency,
            "total_cost": float(plan.total_cost), "status": plan.status}  # fmt: skip
