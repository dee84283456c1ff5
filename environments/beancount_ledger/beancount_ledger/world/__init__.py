"""The world graph: one trading company's month, the single source of truth.

What the bookkeeper actually booked, the public files, the golden ledger and the expected balances
are all projections of a `World` (`render.py`, `answer.py`); nothing else is consulted. The model
is in `model`, the planting of discrepancies in `plants`, generated worlds (a pure function of
seed, profile and years) in `generator`, and the shipped hand-authored world, read from data
files, in `shipped`. Standard worlds plant one of each of `PLANT_KINDS`; hard worlds are longer
and plant one of each of `HARD_KINDS`, beside decoys that are correct as booked; the short
profiles of the difficulty ladder plant fewer.
"""

from beancount_ledger.world.generator import HARD, PROFILES, STANDARD, Profile, generate
from beancount_ledger.world.model import (
    ACCOUNTS,
    AP,
    AR,
    BANK,
    CENT,
    CHART,
    EQUITY,
    FEES,
    HARD_KINDS,
    INTEREST,
    PLANT_KINDS,
    SALES,
    SAVINGS,
    SUSPENSE,
    BankLine,
    Entry,
    Event,
    Party,
    Plant,
    Posting,
    PriorItem,
    World,
    minus,
    money,
    net,
)
from beancount_ledger.world.plants import PLANTERS, PlantError, apply_plants
from beancount_ledger.world.shipped import bank_recon_001

__all__ = [
    "ACCOUNTS",
    "AP",
    "AR",
    "BANK",
    "CENT",
    "CHART",
    "EQUITY",
    "FEES",
    "HARD",
    "HARD_KINDS",
    "INTEREST",
    "PLANTERS",
    "PLANT_KINDS",
    "PROFILES",
    "SALES",
    "SAVINGS",
    "STANDARD",
    "SUSPENSE",
    "BankLine",
    "Entry",
    "Event",
    "Party",
    "Plant",
    "PlantError",
    "Posting",
    "PriorItem",
    "Profile",
    "World",
    "apply_plants",
    "bank_recon_001",
    "generate",
    "minus",
    "money",
    "net",
]
