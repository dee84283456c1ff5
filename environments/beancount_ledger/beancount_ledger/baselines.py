"""Scripted policies for the baseline endpoint (``POLICIES``, and ``noisy`` for ``noisy-<p>``).

The honest ones live in `bookkeeper`, the attacks in `adversaries`:

- ``reference``: reads the ledger, statement and archive through the tools, reconciles every
  bank line (and every untagged repeat of a booked bank line), writes the ledger with one
  correcting entry per discrepancy, runs beancount, submits.
- ``noisy(conversation, p, rng)`` (served as ``noisy-<p>``): the reference, but each correction it
  would book is independently mishandled with probability p: skipped, or booked with its signs
  reversed. p=0 is the reference exactly.
- ``untouched``: writes the ledger back as given and submits.
- ``plug``: one entry forcing the bank account to the statement's closing balance.
- ``rewrite``: fixes the books by editing and deleting the original entries.
- ``invent``: books each correction's counter-leg to a newly opened suspense account.
- ``silent``: never calls a tool.
- ``verbose``: the reference's reads and write, then 100,000-character explanations instead of
  checking and submitting (it runs into the completion-token ceiling).
- ``late``: the reference's reads and write, then checks until the last turn, where it writes the
  ledger as given and submits (calls the episode contract never executes).
- ``reasoned``: the reference, every reply with a reasoning field (``reasoning_content``), for
  the harness's ``replay_reasoning`` knob.
- the adversarial policies of `adversaries` (``exfiltrate``, ``devzero``, ``redos``, ``plugin``,
  ``crash``, ``surrogate``, ``currency``, ``flood``): an attack, then the attacker's attempt to
  profit from it.
"""

from piv_core.policy import Policy

from beancount_ledger import adversaries, bookkeeper
from beancount_ledger.bookkeeper import READS, noisy, noisy_ledger, reference, reference_ledger

__all__ = ["POLICIES", "READS", "noisy", "noisy_ledger", "reference", "reference_ledger"]

POLICIES: dict[str, Policy] = {**bookkeeper.POLICIES, **adversaries.POLICIES}
