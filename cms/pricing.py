"""The pricing table. Tidings has no plan catalogue to read yet, so the site states it here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PricingPlan:
    name: str
    price: str
    period: str
    summary: str
    limits: tuple[str, ...]
    call_to_action: str


PLANS = (
    PricingPlan(
        "Free",
        "$0",
        "per month",
        "For side projects and trying Tidings out.",
        ("10,000 messages a month", "1 project", "Email, push and webhooks", "Community support"),
        "Start for free",
    ),
    PricingPlan(
        "Team",
        "$49",
        "per month",
        "For products with real users.",
        ("250,000 messages a month", "5 projects", "Every channel, journeys and campaigns", "Email support"),
        "Start a trial",
    ),
    PricingPlan(
        "Business",
        "$399",
        "per month",
        "For teams that send at volume.",
        ("5,000,000 messages a month", "Unlimited projects", "SSO, audit log, custom roles", "Priority support, DPA"),
        "Talk to us",
    ),
)


def pricing_plans() -> tuple[PricingPlan, ...]:
    return PLANS
