"""The difficulty ladder: every rung solvable exactly by the golden ledger and the reference, harder
rung by rung, released through the same manifest, and every bad combination refused by name."""

import asyncio
import csv
import io
import json

import pytest
import verifiers.v1 as vf
from beancount_ledger import answer, baselines, contract, keys, ladder, preflight, release, tools, world
from beancount_ledger.bookkeeper import booked_by_ref, counter_account
from beancount_ledger.release import task_digest
from beancount_ledger.scorer import score
from beancount_ledger.statement import bank_lines
from beancount_ledger.statement_view import side_by_side
from beancount_ledger.taskset import LedgerConfig, LedgerTask, LedgerTaskConfig, LedgerTaskset, make_task_data
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout
from piv_core.policy import Conversation
from pydantic import ValidationError

SECRET = "an evaluator secret of some length"
LEVELS = sorted(ladder.RUNGS)


def _reference(data) -> str:
    """The ledger the reference policy writes after reading the files through the real read_file tool."""
    tools = LedgerToolset(vf.SharedToolsetConfig())
    messages: list[dict] = [{"role": "user", "content": "Reconcile the books."}]
    with rollout(LedgerState(files=dict(data.files))):
        for n, name in enumerate(baselines.READS):
            call = {"id": f"c{n}", "function": {"name": "read_file", "arguments": json.dumps({"name": name})}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": tools.read_file(name)})
    (call,) = baselines.reference(Conversation(messages, []))
    return call.arguments["text"]


@pytest.mark.parametrize("level", LEVELS)
def test_every_rung_scores_one_for_golden_and_reference_and_validates(level):
    for n in range(8):
        data = make_task_data(f"dev:{n}:level{level}")
        key = answer.key_of(data)
        assert score(answer.golden_ledger(data), key).reward == 1.0, n
        assert score(_reference(data), key).reward == 1.0, n
        assert asyncio.run(LedgerTask(data, LedgerTaskConfig()).validate(None)), n


def test_rungs_grow_in_discrepancies_and_length():
    worlds = {k: [keys.resolve(f"dev:{n}:level{k}") for n in range(40)] for k in LEVELS}
    plants = {k: {len(w.plants) for w in ws} for k, ws in worlds.items()}
    assert plants == {
        **{k: {1} for k in range(1, 12)},
        12: {3},
        13: {3},
        14: {len(world.PLANT_KINDS)},
        15: {len(world.HARD_KINDS)},
    }
    # Rungs 1 to 11 draw their single kind per world: rungs 1 to 5 (one world, five prompts) a line
    # not booked, booked twice or booked at a wrong amount, rungs 6 to 11 (one world, six prompts)
    # every standard kind; rungs 12 and 13 (one world, two surfaces) three of them.
    flagged = {"missing", "duplicate", "wrong_amount"}
    assert all({w.plants[0].kind for w in worlds[k]} == flagged for k in range(1, 6))
    assert all({w.plants[0].kind for w in worlds[k]} == set(world.PLANT_KINDS) for k in range(6, 12))
    assert all(not w.hard for k in LEVELS[:-1] for w in worlds[k]) and all(w.hard for w in worlds[15])
    size = {k: sum(len(w.booked) for w in ws) for k, ws in worlds.items()}
    assert all(size[k] < size[14] < size[15] for k in range(1, 14))


def test_rung_one_books_every_other_line_once_at_its_amount():
    """Rung 1's statement holds nothing irregular but the planted line: no prior cheque clears, so
    every other line is booked by exactly one entry, at the line's amount in the bank account (what
    makes the one line the view shows booked other than once at its amount the line to correct)."""
    for n in range(40):
        data = make_task_data(f"dev:{n}:level1")
        (fix,) = data.fixes
        files = data.files["ledger.beancount"], data.files["bank_statement.csv"]
        view = side_by_side(*files, amounts=True).splitlines()
        odd = [line.split(" ")[1] for line in view if ": booked once: " not in line]
        assert odd == [fix.ref], (n, odd)
        for line in view:
            if ": booked once: " in line:
                amount = line.split(": booked once: ")[0].rsplit(" ", 1)[1]
                assert f"Assets:Bank:Operating {amount}" in line, (n, line)
        assert "CHEQUE" not in data.files["bank_statement.csv"], n


def test_unset_level_serves_the_selectors_own_worlds(dev_worlds):
    plain = [t.data for t in LedgerTaskset(LedgerConfig(selectors=["dev:3", "train:4"]))]
    expected = [make_task_data("dev:3"), make_task_data("train:4", dev_worlds.encode())]
    assert [task_digest(d) for d in plain] == [task_digest(d) for d in expected]
    levelled = LedgerConfig(selectors=["dev:3", "train:4"], level=1)
    assert levelled.selectors == ["dev:3:level1", "train:4:level1"]
    # A config that went through JSON and back keeps its rung, and serves the same worlds.
    again = LedgerConfig.model_validate(json.loads(levelled.model_dump_json()))
    assert again.selectors == levelled.selectors
    served = [t.data for t in LedgerTaskset(again)]
    assert [d.id for d in served] == ["dev:3:level1", "train:4:level1"]
    assert len(served[0].fixes) == 1 and task_digest(served[1]) != task_digest(plain[1])


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"selectors": ["dev:1"], "level": 0}, "level must be between 1 and 15, got 0"),
        ({"selectors": ["dev:1"], "level": 16}, "level must be between 1 and 15, got 16"),
        ({"selectors": ["train:2:hard"], "level": 2}, "':hard' names its own profile"),
        ({"selectors": ["dev:2:level1"], "level": 2}, "already names level 1"),
        ({"selectors": ["dev:2:level16"]}, "level must be between 1 and 15, got 16"),
    ],
)
def test_bad_combinations_fail_naming_the_knob(dev_worlds, config, words):
    with pytest.raises(ValidationError) as caught:
        LedgerConfig(**config)
    assert words in str(caught.value) and "level" in str(caught.value)


@pytest.mark.parametrize("given", [{}, {"selectors": ["bank_recon_001"]}])
def test_a_level_over_the_default_selectors_fails_at_load(given):
    # Every rung can be named without a world, and a dumped config gives the default selectors
    # back explicitly; the shipped world takes no level, which loading says.
    config = LedgerConfig(level=2, **given)
    with pytest.raises(ValueError, match="level 2 does not apply to 'bank_recon_001'"):
        list(LedgerTaskset(config))


def test_a_levelled_selector_needs_its_own_manifest_record(no_operator, monkeypatch, tmp_path):
    monkeypatch.setenv(keys.SECRET_ENV, SECRET)
    plain = {"eval:0": {"digest": task_digest(make_task_data("eval:0", SECRET.encode()))}}
    path = release.write_manifest(tmp_path / "m.json", plain, SECRET.encode())
    with pytest.raises(ValidationError, match="'eval:0:level1' not in the release manifest"):
        LedgerConfig(selectors=["eval:0"], level=1, manifest=str(path))
    data = make_task_data("eval:0:level1", SECRET.encode())
    records = {**plain, "eval:0:level1": {"digest": task_digest(data), "level": 1}}
    path = release.write_manifest(tmp_path / "m.json", records, SECRET.encode())
    (task,) = LedgerTaskset(LedgerConfig(selectors=["eval:0"], level=1, manifest=str(path)))
    assert task_digest(task.data) == task_digest(data) and task.data.id == "eval:0:level1"
    # The record certifies the levelled world's bytes: another digest refuses it at load.
    records["eval:0:level1"]["digest"] = task_digest(make_task_data("eval:0:level4", SECRET.encode()))
    path = release.write_manifest(tmp_path / "m.json", records, SECRET.encode())
    with pytest.raises(keys.Refused, match="version mismatch"):
        list(LedgerTaskset(LedgerConfig(selectors=["eval:0"], level=1, manifest=str(path))))


def test_the_preflight_certifies_levels_on_request(monkeypatch):
    assert preflight.levels("1-15") == LEVELS and preflight.levels("3,1") == [1, 3]
    for bad in ("16", "x", "0-2"):
        with pytest.raises(Exception, match="--levels"):
            preflight.levels(bad)
    selectors = preflight.population(1, 1, 0, [1, 8], 2)
    assert selectors[:2] == ["train:0", "eval:0"]
    assert selectors[2:] == [f"{s}:{n}:level{k}" for k in (1, 8) for s in ("train", "eval") for n in (0, 1)]
    assert preflight.label("train:1:level8") == "train level 8" and preflight.label("train:1:hard") == "hard"
    monkeypatch.setenv(keys.SECRET_ENV, SECRET)
    for level in LEVELS:
        minted = preflight.mint(f"eval:{level}:level{level}")
        assert minted.failures == [] and minted.record["level"] == level, minted.failures
        assert minted.record["plants"] == len(keys.resolve(minted.selector, SECRET.encode()).plants)


@pytest.mark.e2e
def test_a_levelled_release_through_both_phases_of_the_preflight(no_operator, monkeypatch, tmp_path):
    monkeypatch.setenv(keys.SECRET_ENV, SECRET)
    path = tmp_path / "manifest.json"
    args = ["--train", "0", "--eval", "0", "--hard", "0", "--levels", "1,8", "--level-worlds", "1"]
    assert preflight.main([*args, "--workers", "1", "--manifest", str(path)]) == 0
    body = json.loads(path.read_text())["body"]
    assert sorted(body["records"]) == ["eval:0:level1", "eval:0:level8", "train:0:level1", "train:0:level8"]
    assert body["populations"] == {
        "train": 0,
        "eval": 0,
        "hard": 0,
        "train level 1": 1,
        "eval level 1": 1,
        "train level 8": 1,
        "eval level 8": 1,
    }
    (task,) = LedgerTaskset(LedgerConfig(selectors=["eval:0"], level=8, manifest=str(path)))
    assert task_digest(task.data) == body["records"]["eval:0:level8"]["digest"]
    assert body["records"]["eval:0:level8"]["level"] == 8


def test_the_low_rungs_are_served_their_own_prompts_and_tools(dev_worlds):
    """Rungs 1 to 12: their own tools (rungs 1 to 4 correct_bank_line's surface, rungs 5 to 12
    book_correction's), each with its own prompt (rungs 1 to 6 the side-by-side view alone, with the
    account each line settles at rungs 1 and 2, the line to correct named at rung 1, and a line booked
    at another amount marked at rungs 1 to 3; rung 5 the prompt of rung 6 on rung 4's worlds; rung 7
    the ledger and the statement quoted above the view; rung 8 the archive quoted too; rung 9 the
    policy too; rung 10 those four files alone; rungs 11 and 12 the task alone, for one line booked
    wrongly and for three); every other world the six tools and the common prompt; one server serves
    one surface, so mixing worlds of two surfaces fails at load, while the rungs of one share a
    server."""
    flagged = {}
    for level, name in ((1, "named"), (2, "settled"), (3, "flagged"), (4, "unmarked")):
        data, w = make_task_data(f"dev:0:level{level}"), keys.resolve(f"dev:0:level{level}")
        ledger, statement = data.files["ledger.beancount"], data.files["bank_statement.csv"]
        matched = side_by_side(ledger, statement, **contract.VIEWS[name])
        system, user = contract.PROMPTS[name]
        assert data.system_prompt == system
        assert data.prompt == user.format(company=w.company, month=f"{w.start:%B %Y}", matched=matched)
        assert ("(settles " in data.prompt) == (level < 3) and ("The line to correct" in data.prompt) == (
            level < 2
        )
        # The prompt says whether the view marks a line booked at another amount, as the view does.
        assert ("whether one entry books it at another amount" in system) == (level < 4), level
        assert ("the view does not mark the difference" in system) == (level == 4), level
        flagged[level] = data
    assert all(data.files == flagged[1].files for data in flagged.values())
    # The view names the line to correct only at rung 1, and it is the planted line.
    (fix,) = make_task_data("dev:0:level1").fixes
    assert make_task_data("dev:0:level1").prompt.split("The line to correct")[1].count(f"- {fix.ref} ") == 1
    # Rung 5 serves rung 4's world rung 6's tools and prompts (the plain view alone); rungs 6 to 9
    # serve one world of five kinds: the plain view alone, then the ledger and the statement quoted
    # above it, then the archive quoted too, then the policy too.
    five = make_task_data("dev:0:level5")
    w5 = keys.resolve("dev:0:level5")
    assert five.files == flagged[4].files and five.system_prompt == contract.PROMPTS["append"][0]
    assert five.prompt == contract.APPEND_USER_PROMPT.format(
        company=w5.company,
        month=f"{w5.start:%B %Y}",
        matched=side_by_side(five.files["ledger.beancount"], five.files["bank_statement.csv"]),
    )
    six, seven, eight, nine = (make_task_data(f"dev:0:level{k}") for k in (6, 7, 8, 9))
    w = keys.resolve("dev:0:level6")
    assert six.files == seven.files == eight.files == nine.files
    assert all(keys.resolve(f"dev:0:level{k}").booked == w.booked for k in (7, 8, 9))
    matched = side_by_side(six.files["ledger.beancount"], six.files["bank_statement.csv"])
    month = f"{w.start:%B %Y}"
    assert six.system_prompt == contract.PROMPTS["append"][0]
    assert six.prompt == contract.APPEND_USER_PROMPT.format(company=w.company, month=month, matched=matched)
    for data, name in ((seven, "pair"), (eight, "archive"), (nine, "quoted")):
        assert data.system_prompt == contract.PROMPTS[name][0], name
        files = contract.quoted_files(data.files, name)
        assert data.prompt == contract.QUOTED_USER_PROMPT.format(
            company=w.company, month=month, files=files, matched=matched
        ), name
    # Rungs 10 and 11 serve that world too: the four files quoted without the view, then nothing quoted.
    ten, eleven = make_task_data("dev:0:level10"), make_task_data("dev:0:level11")
    assert ten.files == eleven.files == six.files
    files = contract.quoted_files(ten.files, "files")
    assert ten.prompt == contract.FILES_USER_PROMPT.format(company=w.company, month=month, files=files)
    assert eleven.prompt == contract.READ_USER_PROMPT.format(company=w.company, month=month)
    assert (ten.system_prompt, eleven.system_prompt) == (
        contract.PROMPTS["files"][0],
        contract.PROMPTS["read"][0],
    )
    # The quoted files are the files as given, whole: the ledger and the statement at rung 7, the
    # archive too at rung 8, all four at rungs 9 and 10, none elsewhere; only rungs 1 to 9 show the view.
    quoted = (
        (seven, contract.QUOTED[:2], "two"),
        (eight, contract.QUOTED[:3], "three"),
        (nine, contract.QUOTED, "four"),
        (ten, contract.QUOTED, "four"),
        (five, (), None),
        (six, (), None),
        (eleven, (), None),
    )
    assert contract.QUOTED == (
        "ledger.beancount",
        "bank_statement.csv",
        "archive_prior_period.csv",
        "policy.md",
    )
    for data, names, count in quoted:
        assert [name for name in contract.QUOTED if f"===== {name} =====" in data.prompt] == list(names)
        assert all(f"===== {name} =====\n{data.files[name]}" in data.prompt for name in names)
        assert ("quotes" in data.system_prompt) == bool(names)
        assert not names or f"quotes the first {count} as given" in data.system_prompt
    assert all(": booked once: " in shown.prompt for shown in (five, six, seven, eight, nine))
    assert all(": booked once: " not in other.prompt for other in (ten, eleven))
    # Each of rungs 7 to 9 adds what it quotes to the rung below: its user message is longer than the
    # rung below's by more than the file it adds.
    steps = (
        (six, seven, "ledger.beancount"),
        (seven, eight, "archive_prior_period.csv"),
        (eight, nine, "policy.md"),
    )
    for below, data, name in steps:
        assert len(data.prompt) - len(below.prompt) > len(data.files[name]), name
    # Rung 12: rung 11's prompts for a month with three lines booked wrongly, the world rung 13 serves
    # with the six tools.
    twelve, thirteen = make_task_data("dev:0:level12"), make_task_data("dev:0:level13")
    w12 = keys.resolve("dev:0:level12")
    assert twelve.files == thirteen.files and len(twelve.fixes) == 3
    assert twelve.prompt == contract.THREE_USER_PROMPT.format(company=w12.company, month=f"{w12.start:%B %Y}")
    assert (
        twelve.system_prompt == contract.PROMPTS["three"][0] and "exactly three lines" in twelve.system_prompt
    )
    for selector in ("dev:0", "dev:0:level13", "dev:0:level14", "dev:0:level15", "bank_recon_001"):
        assert make_task_data(selector).system_prompt == contract.SYSTEM_PROMPT, selector
    # Every rule the common prompt states, the low rungs' prompts state too, each naming the tools
    # served beside it (the writers among them in the rule of what is scored).
    rules = contract.SYSTEM_PROMPT.split("Episode rules:")[1]
    served = {ladder.RUNGS[level]["prompt"]: ladder.RUNGS[level]["tools"] for level in range(1, 13)}
    assert served == {
        **{name: "bank" for name in ("named", "settled", "flagged", "unmarked")},
        **{name: "append" for name in ("append", "pair", "archive", "quoted", "files", "read", "three")},
    }
    writers = {"bank": "correct_bank_line", "append": "book_correction"}
    for name, surface in served.items():
        system = contract.PROMPTS[name][0]
        own = rules.replace("write_ledger", f"write_ledger or {writers[surface]}")
        assert own.strip() in system, name
        assert all(f" {tool}" in system for tool in tools.SURFACES[surface]), name
        assert writers["bank" if surface == "append" else "append"] not in system, name
    # Built without validation: which surface a rung gets is the question here, not whether a dev
    # world is admitted (an installed copy refuses dev worlds at load).
    surfaces = {
        level: LedgerTaskset.toolsets(LedgerConfig.model_construct(selectors=["dev:0"], level=level))
        for level in LEVELS
    }
    assert {level: t.config.surface for level, (t,) in surfaces.items()} == {
        **{k: "bank" for k in range(1, 5)},
        **{k: "append" for k in range(5, 13)},
        **{k: "full" for k in (13, 14, 15)},
    }
    (plain,) = LedgerTaskset.toolsets(LedgerConfig.model_construct(selectors=["dev:0", "bank_recon_001"]))
    assert plain.config.surface == "full"
    names = {name: [t["name"] for t in contract.tool_schemas(name)] for name in tools.SURFACES}
    assert names == {name: sorted(published) for name, published in tools.SURFACES.items()}
    bank, append = "level 1, 2, 3, 4", "level 5, 6, 7, 8, 9, 10, 11, 12"
    mixes = {
        ("dev:0:level1", "dev:1"): f"{bank}; every other world",
        ("dev:0:level12", "dev:1:level13"): f"{append}; every other world",
        ("dev:0:level4", "dev:1:level5"): f"{bank}; {append}",
    }
    for mixed, groups in mixes.items():
        with pytest.raises(
            ValidationError, match=f"selectors mix worlds served different tools \\({groups}\\)"
        ):
            LedgerConfig(selectors=list(mixed))
    # The rungs of one surface share a server (asked of the ladder: an installed copy refuses dev
    # worlds at load).
    assert ladder.surface([f"dev:{k}:level{k}" for k in range(1, 5)]) == "bank"
    assert ladder.surface([f"dev:1:level{k}" for k in range(5, 13)]) == "append"


@pytest.mark.parametrize(
    ("level", "kinds"),
    [
        (1, {"missing", "duplicate", "wrong_amount"}),
        (5, {"missing", "duplicate", "wrong_amount"}),
        (6, set(world.PLANT_KINDS)),
    ],
)
def test_each_planted_fix_booked_through_book_correction_scores_one_at_the_low_rungs(level, kinds):
    """The low rungs' tools reach the full score: each world's one fix, given as its parts (the
    statement line's ref, the amount and the two accounts it moves between; the tool dates it), is
    the golden correction, and so, for every fix that moves the operating bank (all of rung 1's, as
    its prompt asks), is the bank's amount and the other account given to correct_bank_line. Every
    kind of discrepancy the rung plants is among these worlds."""
    seen = set()
    for n in range(24):
        data = make_task_data(f"dev:{n}:level{level}")
        (fix,) = data.fixes
        seen.add(fix.kind)
        (first, amount), (second, _) = fix.fix.items()
        calls = [("book_correction", (fix.ref, first, f"{amount}", second))]
        if world.BANK in fix.fix:
            (other,) = set(fix.fix) - {world.BANK}
            calls.append(("correct_bank_line", (fix.ref, f"{fix.fix[world.BANK]}", other)))
        assert len(calls) == 2 or level > 5, fix
        for tool, args in calls:
            toolset = LedgerToolset(tools.LedgerToolsConfig(surface=ladder.RUNGS[level]["tools"]))
            with rollout(LedgerState(files=dict(data.files))) as state:
                reply = getattr(toolset, tool)(*args)
                assert reply.startswith("written: revision 1"), reply
                assert f'{fix.date} * "Correction for {fix.ref}"' in state.ledger
                assert score(state.ledger, answer.key_of(data)).reward == 1.0, (n, tool)
    assert seen == kinds, seen


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_the_prompts_subtraction_written_out_books_the_correction(level):
    """Rungs 1 to 4 let A be written as the line's amount minus what the entries carrying its ref post
    to the bank, and correct_bank_line works it out: that subtraction, written with the figures as
    the files give them (no entry: minus nothing), scores 1.0 for every kind the rungs plant."""
    seen = set()
    for n in range(24):
        data = make_task_data(f"dev:{n}:level{level}")
        (fix,) = data.fixes
        seen.add(fix.kind)
        (line,) = (row for row in bank_lines(data.files["bank_statement.csv"]) if row["ref"] == fix.ref)
        entries = booked_by_ref(data.files[tools.LEDGER]).get(fix.ref, [])
        posted = [f"({p.units.number:.2f})" for e in entries for p in e.postings if p.account == world.BANK]
        (other,) = set(fix.fix) - {world.BANK}
        toolset = LedgerToolset(tools.LedgerToolsConfig(surface="bank"))
        with rollout(LedgerState(files=dict(data.files))) as state:
            reply = toolset.correct_bank_line(fix.ref, " - ".join([line["amount"], *posted]), other)
            assert reply.startswith("written: revision 1"), reply
            assert score(state.ledger, answer.key_of(data)).reward == 1.0, (n, fix.kind)
    assert seen == {"missing", "duplicate", "wrong_amount"}, seen


@pytest.mark.parametrize("level", range(1, 10))
def test_the_side_by_side_view_is_read_from_the_files_and_names_no_fix(level):
    """Each statement line with a ref appears once, with every entry carrying its ref and nothing
    else: the view is the statement and the ledger's bank_ref entries, read by beancount's parser,
    with the policy's account for each line at rungs 1 and 2, and at rungs 1 to 3 a line booked once at
    another amount marked so (rung 4 shows rung 3's view without that mark). Only rung 1 names the
    line to correct, and then exactly the planted one; no rung names the kind or the fix."""
    for n in range(12):
        data = make_task_data(f"dev:{n}:level{level}")
        if level < 5:
            view = data.prompt.split("what they post:\n\n", 1)[1].split("\n\nBook its", 1)[0]
        elif level < 7:
            view = data.prompt.split("carrying its ref:\n\n", 1)[1]
        else:
            view = data.prompt.split("carrying its ref =====\n", 1)[1]
        view, _, named = view.partition("\n\nThe line to correct, ")
        named = named.partition(":\n")[2]
        (fix,) = data.fixes
        statement = list(csv.DictReader(io.StringIO(data.files["bank_statement.csv"])))
        rows = [row for row in statement if row["ref"]]
        lines = view.strip().splitlines()
        assert [line.split(" ")[1] for line in lines] == [row["ref"] for row in rows], n
        ledger = data.files["ledger.beancount"]
        for line, row in zip(lines, rows):
            tagged = ledger.count(f'bank_ref: "{row["ref"]}"')
            assert line.count(" | ") == max(tagged - 1, 0), (n, line)
            assert ("not booked" in line) == (tagged == 0), (n, line)
            settles = f" (settles {counter_account(row['description'])}): "
            assert (settles in line) == (level < 3), (n, line)
            marked = level < 4 and fix.kind == "wrong_amount" and row["ref"] == fix.ref
            assert (": booked once, at another amount: " in line) == marked, (n, line)
        assert fix.kind not in view + named and "correct" not in view.lower(), n
        assert [line.split(" ")[1] for line in named.splitlines()] == ([fix.ref] if level == 1 else []), n
