"""`scheduler-agent models`: the models `-m` takes that have a price, with their prices and the default marked."""

from __future__ import annotations

import json
from decimal import Decimal

import click

from scheduler_agent.agent.request import DEFAULT_MODEL
from scheduler_agent.cli.core import command, examples
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import json_flag


def _usd(price: Decimal | None) -> str:
    return "tiered" if price is None else f"${price:.2f}"


@command("models", epilog=examples("scheduler-agent models", "scheduler-agent models --json | jq '.[].name'"))
@json_flag(help="One JSON array: name, default, and the prices (US dollars per million tokens; null when tiered).")
@person_facing()
def models_command(as_json: bool) -> None:
    """The models of the SDK's model list that the price table prices, per million tokens; the default marked."""
    from scheduler_agent.api.models import priced_models

    models = priced_models()
    if as_json:
        rows = [
            {
                "name": m.name,
                "default": m.name == DEFAULT_MODEL,
                "input": _number(m.input),
                "output": _number(m.output),
                "cache_read": _number(m.cache_read),
                "cache_write": _number(m.cache_write),
            }
            for m in models
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(m.name) for m in models) + len(" (default)")
    click.echo(f"{'MODEL':<{width}}  {'INPUT':>7}  {'OUTPUT':>7}  {'CACHE READ':>10}  {'CACHE WRITE':>11}")
    for m in models:
        name = f"{m.name} (default)" if m.name == DEFAULT_MODEL else m.name
        click.echo(
            f"{name:<{width}}  {_usd(m.input):>7}  {_usd(m.output):>7}  {_usd(m.cache_read):>10}  "
            f"{_usd(m.cache_write):>11}"
        )
    click.echo("US dollars per million tokens (prices: genai-prices, offline). `-m MODEL` chooses one.")


def _number(price: Decimal | None) -> float | None:
    return None if price is None else float(price)
