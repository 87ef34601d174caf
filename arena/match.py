"""`garfish match`: play a match between two UCI engines with colour-swapped pairs of games.

Each opening (a FEN/EPD line, or the final position of a PGN game; openings are taken in a
random order fixed by --seed) is played twice, the engines swapping colours. Every concurrency
slot (a thread) owns its own pair of engine processes.

Limits and time losses:
  --tc BASE+INC   real clocks: before each move the engine gets wtime/btime/winc/binc. The wall
                  time of a move is measured from sending `position`/`go` to receiving `bestmove`.
                  A move is a time loss when that time exceeds the mover's remaining clock by more
                  than --time-margin (default 0 ms). Otherwise the time is taken off the clock
                  (not below 0) and the increment added.
  --movetime MS   `go movetime MS`; a time loss when a move takes longer than MS + --time-margin
                  (default 100 ms, for the engine's reply latency).
  --nodes N       `go nodes N`; no time losses, but an engine silent for --stall-timeout seconds
                  forfeits on time.
  A watchdog kills an engine 1 s after its move became a time loss (it is restarted for the next game).

Pondering (--ponder, or ponder=true for one engine): after a bestmove with a ponder move the engine
gets `position ... <its move> <ponder move>` and `go ponder` with the clocks it will have. When the
opponent plays that move it gets `ponderhit` and its move is timed from the ponderhit; otherwise it
gets `stop` (that bestmove is discarded) and, once it has answered isready, a normal `go` timed as
usual: the stop costs it no clock time. Ponder searches still running when a game ends are stopped.

Chess960: openings whose castling rights only make sense in Chess960 (a king or rook off its
standard square), or all openings with --chess960, are played as Chess960; both engines must
declare UCI_Chess960, which python-chess then sets, and moves are sent in king-takes-rook form.

Game ends by the rules in effect, as cutechess-cli and fastchess end them (arena.rules):
checkmate, stalemate, insufficient material, a position reached for the third time, 100 plies
without a capture or pawn move (never a draw the side to move merely could claim); adjudication
(resign: both engines report a score of at least --resign-score cp for the same side for
--resign-moves moves each; draw: both report |score| <= --draw-score cp for --draw-moves moves
each from move --draw-after on; --max-moves); forfeits: illegal move (also `bestmove 0000` /
`(none)`), time loss, crash/disconnection. A forfeit is a draw when the opponent has no mating
material. Crashed or killed engines are restarted.

Statistics (from the first engine's side): W/D/L, Elo with a 95% interval from the pentanomial
of finished pairs, LOS (normal approximation over W and L), and with --sprt the generalized SPRT
for logistic Elo on the pentanomial of finished pairs (fishtest's LLR_logistic: the exact
maximum-likelihood ratio of the multinomial model, see arena.stats); the match stops when the
LLR leaves [ln(beta/(1-alpha)), ln((1-beta)/alpha)]. Games already running when a decision
falls are finished and counted. With --sprt-play-on the match plays all --games and the report
gives the first decision and the number of games it took, beside the final LLR.

Gauntlets and round robins (--field FIELD, arena.field and arena.gauntlet): the engine of --engine
plays every opponent of a field, or with --round-robin every player plays every other, each
pairing --games games on the same openings with both colours; the report gives each pairing's
W D L and pentanomial, the engine's rating fitted by maximum likelihood over all its games against
the opponents' published ratings (arena.mlrating), and every player's rating from the games alone.

Cores (--pin CPUS): slot i's engines run on processor CPUS[i] only (os.sched_setaffinity), so that
with --concurrency 2 --pin 0,1 each game's two engines share one core of their own; keep other work
off those cores while the games decide something.

Resuming: with --pgnout GAMES.pgn the runner keeps a journal, GAMES.pgn.match (arena.journal); the
same command with --resume continues an interrupted match (Ctrl-C, kill, a machine that stopped):
the games the journal records count as played, the PGN is cut back to the last of them, and the
other games are played. The settings that decide the games must be the same (it says which is
not); --concurrency may change, and without --seed the journal's is taken.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import queue
import re
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Optional

import chess

from garfish.arena import field, gauntlet, journal, stats
from garfish.arena.driver import (CHESS960_OPTION, DEFAULT_COMMAND, FALSE_WORDS, PROTOCOLS, TRUE_WORDS, EngineProcess,
                                  EngineSpec, EngineStartError, parse_cpus, quiet_python_chess, split_command)
from garfish.arena.game import DEFAULT_STALL_TIMEOUT, Adjudication, GameRecord, MatchAborted, TimeControl, play_game
from garfish.arena.openings import GameTask, load_openings, make_tasks
from garfish.arena.report import (MatchState, SprtConfig, check_matplotlib, game_line, plot_history, print_summary,
                                  summary_dict)
from garfish.arena.sidecar import choose_seed
from garfish.arena.tools import EXIT_ENGINE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, check_cluster, interruptible

if TYPE_CHECKING:
    from tqdm import tqdm

PROG = "garfish match"
LOG = logging.getLogger(__name__)
DEFAULT_CLOCK_MARGIN_MS = 0
DEFAULT_MOVETIME_MARGIN_MS = 100
ENGINE_COUNT = 2
ABORT_JOIN_SECONDS = 10.0  # how long an interrupted match waits for its slot threads
TC_PATTERN = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*$")
SPRT_KEYS = MappingProxyType({"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05})
ENGINE_KEYS = "keys: cmd, name, proto, ponder, option.NAME"


# --------------------------------------------------------------------------- configuration
@dataclass
class MatchConfig:
    """Everything the match needs."""

    engines: list[EngineSpec]
    tc: TimeControl
    games: int
    concurrency: int
    adjudication: Adjudication
    sprt: Optional[SprtConfig]
    seed: Optional[int]
    event: str = "garfish match"
    mode: str = "match"  # or a gauntlet.MODES: "gauntlet", "round robin"
    pairings: list[tuple[int, int]] = dataclasses.field(default_factory=lambda: [(0, 1)])  # players by index
    ratings: list[Optional[float]] = dataclasses.field(default_factory=list)  # published ratings (a field's)
    sources: list[str] = dataclasses.field(default_factory=list)  # where each published rating comes from
    cpus: Optional[list[int]] = None  # --pin: slot i's engines on processor cpus[i % len(cpus)]


# --------------------------------------------------------------------------- parsing
def parse_tc(text: str) -> tuple[float, float]:
    """'10+0.1' -> (10.0, 0.1), '60' -> (60.0, 0.0); ValueError otherwise."""
    match = TC_PATTERN.match(text)
    if not match:
        raise ValueError(f"--tc must be BASE+INC in seconds (e.g. 10+0.1), not '{text}'")
    base, increment = float(match.group(1)), float(match.group(2) or 0.0)
    if base <= 0:
        raise ValueError("--tc base time must be positive")
    return base, increment


def parse_engine(tokens: list[str], index: int) -> EngineSpec:
    """`cmd=CMD name=N ponder=true option.X=V ...` -> EngineSpec (ValueError on bad input)."""
    argv: Optional[list[str]] = None
    name: Optional[str] = None
    ponder = False
    protocol = "uci"
    options: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"--engine {index}: '{token}' is not KEY=VALUE ({ENGINE_KEYS})")
        if key == "cmd":
            argv = split_command(value)
        elif key == "name":
            name = value
        elif key == "proto":
            if value not in PROTOCOLS:
                raise ValueError(f"--engine {index}: proto takes {' or '.join(PROTOCOLS)}, not '{value}'")
            protocol = value
        elif key == "ponder":
            if value.lower() not in TRUE_WORDS + FALSE_WORDS:
                raise ValueError(f"--engine {index}: ponder takes true or false, not '{value}'")
            ponder = value.lower() in TRUE_WORDS
        elif key.startswith("option.") and len(key) > len("option."):
            options[key[len("option."):]] = value
        else:
            raise ValueError(f"--engine {index}: unknown key '{key}' ({ENGINE_KEYS})")
    if ponder and protocol != "uci":
        raise ValueError(f"--engine {index}: ponder=true needs a UCI engine")
    return EngineSpec(argv=argv or list(DEFAULT_COMMAND), options=options, name=name, ponder=ponder,
                      protocol=protocol)


def parse_sprt(tokens: list[str]) -> SprtConfig:
    """`elo0=0 elo1=10 alpha=0.05 beta=0.05` (any subset; defaults as shown) -> SprtConfig."""
    values = dict(SPRT_KEYS)
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or key not in SPRT_KEYS:
            raise ValueError(f"--sprt takes elo0=, elo1=, alpha=, beta=, not '{token}'")
        try:
            values[key] = float(value)
        except ValueError:
            raise ValueError(f"--sprt {key} must be a number, not '{value}'") from None
    if values["elo1"] <= values["elo0"]:
        raise ValueError("--sprt needs elo1 > elo0")
    stats.sprt_bounds(values["alpha"], values["beta"])
    return SprtConfig(elo0=values["elo0"], elo1=values["elo1"], alpha=values["alpha"], beta=values["beta"])


# --------------------------------------------------------------------------- the match
def slot_worker(slot: int, engines: list[EngineProcess], tasks: "queue.Queue[GameTask]", config: MatchConfig,
                state: "MatchState | gauntlet.GauntletState", on_game: Callable[[GameRecord], None]) -> None:
    """One concurrency slot: play games from the queue with its own engines (one a player) until done or
    stopped."""
    while not state.stop.is_set():
        try:
            task = tasks.get_nowait()
        except queue.Empty:
            return
        players = engines if config.mode == "match" else [engines[player] for player in config.pairings[task.pairing]]
        for engine in engines:  # in a gauntlet the slot's other engines wait stopped (one may poll while idle)
            if engine in players:
                engine.resume()
            else:
                engine.pause()
        try:
            record = play_game(task, players, config.tc, config.adjudication, config.event, state.abort)
        except MatchAborted:
            return
        except EngineStartError as exc:
            state.fail(f"slot {slot}, game {task.number}: an engine could not be restarted: {exc}")
            return
        except Exception as exc:  # a bug in the runner: report it with its traceback, stop the match
            LOG.exception("slot %d, game %d: internal error", slot, task.number)
            state.fail(f"slot {slot}, game {task.number}: internal error: {type(exc).__name__}: {exc}")
            return
        if state.abort.is_set():
            return  # interrupted: the game may have ended only because its engines were killed
        on_game(record)


def slot_specs(specs: list[EngineSpec], slot: int, cpus: Optional[list[int]]) -> list[EngineSpec]:
    """A slot's own copies of the engine specs, on processor cpus[slot] (cycling) when cores are pinned."""
    if not cpus:
        return [dataclasses.replace(spec) for spec in specs]
    return [dataclasses.replace(spec, cpus=(cpus[slot % len(cpus)],)) for spec in specs]


def start_engines(specs: list[EngineSpec], slots: int, cpus: Optional[list[int]] = None) -> list[list[EngineProcess]]:
    """Start `slots` sets of engines (one a player) in parallel; on any failure close the others and raise
    EngineStartError."""
    started: list[list[Optional[EngineProcess]]] = [[None] * len(specs) for _ in range(slots)]
    errors: list[str] = []
    copies = [slot_specs(specs, slot, cpus) for slot in range(slots)]

    def start(slot: int, index: int) -> None:
        """Start one engine (thread body)."""
        try:
            started[slot][index] = EngineProcess(copies[slot][index])
        except EngineStartError as exc:
            errors.append(f"engine {index + 1} ({specs[index].name or specs[index].argv[0]}): {exc}")

    threads = [threading.Thread(target=start, args=(slot, index), daemon=True)
               for slot in range(slots) for index in range(len(specs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        for pair in started:
            for engine in pair:
                if engine is not None:
                    engine.close()
        raise EngineStartError(sorted(set(errors))[0])
    return [[engine for engine in pair if engine is not None] for pair in started]


def check_chess960(engines: list[tuple[str, bool]], tasks: list[GameTask]) -> None:
    """Chess960 openings need engines that declare UCI_Chess960 (engines: (name, declares it); raises
    EngineStartError)."""
    if not any(task.chess960 for task in tasks):
        return
    for name, chess960 in engines:
        if not chess960:
            raise EngineStartError(f"engine '{name}' does not declare the {CHESS960_OPTION} option, "
                                   f"which the Chess960 openings need")


def distinct_names(names: list[str]) -> list[str]:
    """The players' display names, a name already taken getting ' 2' (' 3', ...) after it."""
    distinct: list[str] = []
    for name in names:
        number, chosen = 1, name
        while chosen in distinct:
            number += 1
            chosen = f"{name} {number}"
        distinct.append(chosen)
    return distinct


class GameSink:
    """Counts and prints each finished game as it comes, and writes the PGN in game order (a game waits
    for the ones before it), so the file's order does not depend on which game finished first."""

    def __init__(self, state: "MatchState | gauntlet.GauntletState", bar: "tqdm", files: journal.GameFiles,
                 numbers: list[int]) -> None:
        """Games will come with these numbers."""
        self.state = state
        self.bar = bar
        self.files = files
        self.order = sorted(numbers)
        self.next = 0  # index in `order` of the next game to write
        self.waiting: dict[int, GameRecord] = {}

    def add(self, record: GameRecord) -> None:
        """Count, print and (in order) save a finished game."""
        state = self.state
        with state.lock:
            state.add(record)
            line = (gauntlet.gauntlet_line(record, state) if isinstance(state, gauntlet.GauntletState)
                    else game_line(record, state))
            self.bar.update(1)
            self.bar.write(line, file=sys.stdout)
            sys.stdout.flush()
            self.waiting[record.number] = record
            while self.next < len(self.order) and self.order[self.next] in self.waiting:
                self._write(self.waiting.pop(self.order[self.next]))
                self.next += 1

    def flush(self) -> None:
        """Write the games still waiting (a match that stopped early leaves gaps), in order."""
        with self.state.lock:
            for number in sorted(self.waiting):
                self._write(self.waiting.pop(number))

    def _write(self, record: GameRecord) -> None:
        """Append one game to the PGN file and the journal."""
        self.files.write(record)


def announce(state: "MatchState | gauntlet.GauntletState", tasks: list[GameTask], config: MatchConfig, where: str,
             out: Callable[[str], None]) -> None:
    """The match's first line."""
    ponders = [spec.ponder for spec in config.engines]
    extras = "".join(f", {name} ponders" for name, ponder in zip(state.names, ponders) if ponder)
    if config.cpus:
        extras += f", engines pinned to processors {','.join(map(str, config.cpus))}"
    if any(task.chess960 for task in tasks):
        extras += ", Chess960"
    if state.records:
        extras += f", resumed after {len(state.records)} games"
    if config.mode == "gauntlet":
        who = f"{state.names[0]} against a field of {len(state.names) - 1} ({', '.join(state.names[1:])})"
    elif config.mode == "round robin":
        who = f"a round robin of {len(state.names)} ({', '.join(state.names)})"
    else:
        who = f"{state.names[0]} vs {state.names[1]}"
    per = f" ({config.games} a pairing)" if config.mode != "match" else ""
    out(f"{PROG}: {who}, {state.total} games{per}, {config.tc.describe()}, {where}, seed {config.seed}{extras}")


def new_state(config: MatchConfig, names: list[str], total: int,
              played: list[GameRecord]) -> "MatchState | gauntlet.GauntletState":
    """The results of a match (gauntlet, round robin) between engines with these display names, counting the
    games already played."""
    state: MatchState | gauntlet.GauntletState
    if config.mode != "match":
        state = gauntlet.GauntletState(names=names, pairings=config.pairings, ratings=config.ratings, total=total,
                                       mode=config.mode)
    else:
        state = MatchState(names=names, total=total, sprt_config=config.sprt,
                           ponder=(config.engines[0].ponder, config.engines[1].ponder))
    for record in played:
        state.add(record)
    return state


def played_names(played: list[GameRecord], config: MatchConfig) -> list[str]:
    """The display names the players had in these games (not empty); a player whose games are not among them
    keeps its spec's name."""
    names = [spec.name or spec.argv[0] for spec in config.engines]
    for record in played:
        first, second = config.pairings[record.pairing]
        names[first], names[second] = ((record.white, record.black) if record.engine1_white
                                       else (record.black, record.white))
    return names


def progress_bar(total: int, done: int, progress: bool) -> "tqdm":
    """The games bar on stderr (off without a TTY or when not wanted)."""
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="game", file=sys.stderr, dynamic_ncols=True,
                disable=None if progress else True)


def journal_settings(config: MatchConfig, openings: Optional[Path], chess960: bool) -> dict[str, Any]:
    """What decides a match's games, as its journal keeps it (ValueError when the openings cannot be read)."""
    engines = [{"argv": spec.argv, "options": spec.options, "name": spec.name, "ponder": spec.ponder,
                **({"protocol": spec.protocol} if spec.protocol != "uci" else {})} for spec in config.engines]
    extra = {} if config.mode == "match" else {"mode": config.mode, "pairings": [list(p) for p in config.pairings]}
    return {"engines": engines, **extra,
            "limits": asdict(config.tc), "games": config.games, "seed": config.seed, "chess960": chess960,
            "openings": None if openings is None else openings.name, "openings_sha256": journal.file_digest(openings),
            "adjudication": asdict(config.adjudication), "sprt": None if config.sprt is None else asdict(config.sprt),
            "event": config.event}


def unplayed(tasks: list[GameTask], played: list[GameRecord]) -> list[GameTask]:
    """The tasks whose games are not among those played."""
    done = {record.number for record in played}
    return [task for task in tasks if task.number not in done]


def run_match(config: MatchConfig, tasks: list[GameTask], files: journal.GameFiles, progress: bool,
              out: Callable[[str], None], played: Optional[list[GameRecord]] = None
              ) -> "MatchState | gauntlet.GauntletState":
    """Play all games but those already played (or until the SPRT decides); returns the final state (raises
    EngineStartError at start)."""
    played = played or []
    remaining = unplayed(tasks, played)
    slots = max(1, min(config.concurrency, len(remaining)))
    pairs = start_engines(config.engines, slots, config.cpus)
    try:
        check_chess960([(engine.name, engine.supports(CHESS960_OPTION)) for engine in pairs[0]], tasks)
    except EngineStartError:
        for pair in pairs:
            for engine in pair:
                engine.close()
        raise
    names = distinct_names([engine.name for engine in pairs[0]])
    for slot_engines in pairs:
        for engine, name in zip(slot_engines, names):
            engine.spec.name = name  # each slot has its own specs: name every slot's engines
    for spec, name in zip(config.engines, names):
        spec.name = name
    state = new_state(config, names, len(tasks), played)
    queue_: "queue.Queue[GameTask]" = queue.Queue()
    for task in remaining:
        queue_.put(task)
    bar = progress_bar(len(tasks), len(played), progress)
    sink = GameSink(state, bar, files, [task.number for task in remaining])
    announce(state, tasks, config, f"concurrency {slots}", out)
    threads = [threading.Thread(target=slot_worker, args=(slot, pairs[slot], queue_, config, state, sink.add),
                                daemon=True, name=f"match-slot-{slot}") for slot in range(slots)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        state.abort.set()
        state.fail("interrupted by the user; unfinished games are not counted")
        for pair in pairs:
            for engine in pair:
                engine.kill()
        for thread in threads:
            thread.join(ABORT_JOIN_SECONDS)
    finally:
        sink.flush()
        bar.close()
        for pair in pairs:
            for engine in pair:
                engine.close()
    return state


def run_cluster_match(config: MatchConfig, tasks: list[GameTask], files: journal.GameFiles, progress: bool,
                      out: Callable[[str], None], address: str, verbose: bool = False,
                      played: Optional[list[GameRecord]] = None) -> "MatchState | gauntlet.GauntletState":
    """Play the match but the games already played on a Dask cluster, one task per opening pair (see
    garfish.arena.cluster); raises EngineStartError when the cluster cannot be used or the engines cannot
    start on the first worker asked."""
    from garfish.arena import cluster

    played = played or []
    remaining = unplayed(tasks, played)
    specs = [cluster.for_workers(spec) for spec in config.engines]
    with cluster.connect(address, verbose) as client:
        facts = cluster.probe(client, specs)
        check_chess960(facts, tasks)
        names = distinct_names([name for name, _ in facts])
        for spec, name in zip(specs, names):
            spec.name = name  # every worker's engines report under the same names
        state = new_state(config, names, len(tasks), played)
        pairs: dict[int, list[GameTask]] = {}
        for task in remaining:
            pairs.setdefault(task.pair, []).append(task)
        bar = progress_bar(len(tasks), len(played), progress)
        sink = GameSink(state, bar, files, [task.number for task in remaining])
        announce(state, tasks, config, f"cluster {address} ({cluster.worker_threads(client)} worker threads)", out)
        jobs = [(pair + 1, ([specs[player] for player in config.pairings[games[0].pairing]], games, config.tc,
                            config.adjudication, config.event))
                for pair, games in sorted(pairs.items())]
        results = cluster.stream(client, cluster.play_pair, jobs, "opening pair")
        try:
            for records in results:  # a pair's games, in game order
                for record in records:
                    sink.add(record)
                if state.stop.is_set():
                    break
        except cluster.WorkerEngineError as exc:
            state.fail(str(exc))
        except KeyboardInterrupt:
            state.abort.set()
            state.fail("interrupted by the user; unfinished games are not counted")
        finally:
            results.close()
            sink.flush()
            bar.close()
    return state


# --------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish match`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", action="append", nargs="+", metavar="KEY=VALUE",
                        help="an engine: cmd=CMD (shell-quoted; default Garfish) name=N proto=uci|xboard ponder=true "
                             "option.X=V; give it twice (once with --field)")
    parser.add_argument("--field", metavar="FILE",
                        help="a gauntlet: the engine against every opponent of this field (a TOML file, or the name "
                             f"of a field shipped with Garfish: {', '.join(field.shipped_fields()) or 'none'}); "
                             "--games is then a pairing's")
    parser.add_argument("--opponents", metavar="NAME,NAME",
                        help="with --field: only these opponents of the field")
    parser.add_argument("--round-robin", action="store_true",
                        help="with --field: every player against every other (the engine of --engine too, if given)")
    parser.add_argument("--pin", metavar="CPUS",
                        help="run slot i's engines on processor CPUS[i] only, e.g. --concurrency 2 --pin 0,1")
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--tc", metavar="BASE+INC", help="clock per side in seconds, e.g. 10+0.1")
    limit.add_argument("--movetime", type=float, metavar="MS", help="milliseconds per move")
    limit.add_argument("--nodes", type=int, metavar="N", help="nodes per move")
    parser.add_argument("--games", type=int, required=True, metavar="N",
                        help="number of games (with --field: of each pairing)")
    parser.add_argument("--openings", type=Path, metavar="FILE",
                        help="EPD/FEN lines or PGN games (final positions); default: the start position")
    parser.add_argument("--chess960", action="store_true",
                        help="play the openings as Chess960 (automatic for Chess960-only castling rights)")
    parser.add_argument("--ponder", action="store_true", help="both engines think on the opponent's time")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--concurrency", type=int, default=1, metavar="J", help="games played at once")
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="play on a Dask cluster: a scheduler address (tcp://HOST:8786) or local[:N] "
                            "(see garfish.arena.cluster)")
    parser.add_argument("--pgnout", type=Path, metavar="FILE",
                        help="write all games to this PGN file (and the match's journal to FILE.match)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the match whose journal is beside --pgnout (the same settings); "
                             "a new match when there is none")
    parser.add_argument("--report", type=Path, metavar="FILE.json", help="write the summary as JSON")
    parser.add_argument("--sprt", nargs="*", metavar="KEY=VALUE",
                        help="sequential test: elo0=0 elo1=10 alpha=0.05 beta=0.05 (defaults shown)")
    parser.add_argument("--sprt-play-on", action="store_true",
                        help="with --sprt: play all --games; the report says after how many games it decided")
    parser.add_argument("--seed", type=int, help="seed for the opening order (default: random)")
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="plot Elo and its interval (needs matplotlib)")
    parser.add_argument("--resign-score", type=int, metavar="CP", help="resign adjudication threshold (centipawns)")
    parser.add_argument("--resign-moves", type=int, metavar="M", help="... for M consecutive moves of each engine")
    parser.add_argument("--draw-score", type=int, metavar="CP", help="draw adjudication threshold (centipawns)")
    parser.add_argument("--draw-moves", type=int, metavar="M", help="... for M consecutive moves of each engine")
    parser.add_argument("--draw-after", type=int, default=0, metavar="K", help="... counted from move K on")
    parser.add_argument("--max-moves", type=int, default=0, metavar="N", help="adjudicate a draw after move N")
    parser.add_argument("--time-margin", type=float, metavar="MS",
                        help=f"tolerance before a move is a time loss (default {DEFAULT_CLOCK_MARGIN_MS} ms "
                             f"with --tc, {DEFAULT_MOVETIME_MARGIN_MS} ms with --movetime)")
    parser.add_argument("--stall-timeout", type=float, default=DEFAULT_STALL_TIMEOUT, metavar="S",
                        help="with --nodes: seconds without bestmove before a time forfeit")
    parser.add_argument("--event", default="garfish match", help="PGN Event tag")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it is off when stderr is no TTY)")
    parser.add_argument("--show-stderr", action="store_true", help="let the engines' stderr through")
    parser.add_argument("-v", "--verbose", action="store_true", help="log python-chess's warnings")
    return parser


def build_config(args: argparse.Namespace) -> MatchConfig:
    """MatchConfig from the arguments (ValueError with a message on bad values)."""
    given = args.engine or []
    mode = "match"
    ratings: list[Optional[float]] = []
    sources: list[str] = []
    if args.field is None:
        if args.opponents is not None or args.round_robin:
            raise ValueError("--opponents and --round-robin need --field")
        if len(given) != ENGINE_COUNT:
            raise ValueError(f"give --engine exactly twice (got {len(given)})")
        engines = [parse_engine(tokens, index + 1) for index, tokens in enumerate(given)]
    else:
        if len(given) > 1 or (not given and not args.round_robin):
            raise ValueError(f"with --field give --engine once, the engine the field plays (got {len(given)}; "
                             f"a round robin of the field alone takes none)")
        if args.sprt is not None:
            raise ValueError("--sprt decides a match between two engines, not a gauntlet (--field)")
        opponents = field.choose(field.load_field(args.field), args.opponents)
        engines = [parse_engine(tokens, 1) for tokens in given] + [opponent.spec for opponent in opponents]
        ratings = [None] * len(given)
        ratings += [opponent.rating for opponent in opponents]
        sources = [""] * len(given) + [opponent.rating_source for opponent in opponents]
        mode = "round robin" if args.round_robin else "gauntlet"
        if len(engines) < 2:
            raise ValueError("a round robin needs two players at least")
    for spec in engines:
        spec.show_stderr = args.show_stderr
        spec.ponder = spec.ponder or args.ponder
    if args.games < 1:
        raise ValueError("--games must be at least 1")
    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    if args.time_margin is not None and args.time_margin < 0:
        raise ValueError("--time-margin must not be negative")
    if args.tc is not None:
        base, increment = parse_tc(args.tc)
        margin = DEFAULT_CLOCK_MARGIN_MS if args.time_margin is None else args.time_margin
        tc = TimeControl("clock", base=base, increment=increment, margin=margin / 1000)
    elif args.movetime is not None:
        if not args.movetime > 0:
            raise ValueError("--movetime must be positive")
        margin = DEFAULT_MOVETIME_MARGIN_MS if args.time_margin is None else args.time_margin
        tc = TimeControl("movetime", movetime=args.movetime / 1000, margin=margin / 1000)
    else:
        if args.nodes < 1:
            raise ValueError("--nodes must be at least 1")
        if not args.stall_timeout > 0:
            raise ValueError("--stall-timeout must be positive")
        tc = TimeControl("nodes", nodes=args.nodes, stall_timeout=args.stall_timeout)
    adjudication = Adjudication(max_moves=max(0, args.max_moves), draw_after=max(0, args.draw_after))
    if (args.resign_score is None) != (args.resign_moves is None):
        raise ValueError("--resign-score and --resign-moves go together")
    if args.resign_score is not None:
        if args.resign_score <= 0 or args.resign_moves < 1:
            raise ValueError("--resign-score must be positive and --resign-moves at least 1")
        adjudication.resign_score, adjudication.resign_moves = args.resign_score, args.resign_moves
    if (args.draw_score is None) != (args.draw_moves is None):
        raise ValueError("--draw-score and --draw-moves go together")
    if args.draw_score is not None:
        if args.draw_score < 0 or args.draw_moves < 1:
            raise ValueError("--draw-score must not be negative and --draw-moves must be at least 1")
        adjudication.draw_score, adjudication.draw_moves = args.draw_score, args.draw_moves
    if args.sprt_play_on and args.sprt is None:
        raise ValueError("--sprt-play-on needs --sprt")
    sprt = parse_sprt(args.sprt) if args.sprt is not None else None
    if sprt is not None:
        sprt.play_on = args.sprt_play_on
    if args.plot is not None and mode != "match":
        raise ValueError("--plot draws a match's Elo difference; a gauntlet's figures are in its report")
    cpus = parse_cpus(args.pin) if args.pin is not None else None
    if cpus is not None and args.cluster is not None:
        raise ValueError("--pin places this machine's engines; a cluster's workers place their own")
    config = MatchConfig(engines=engines, tc=tc, games=args.games, concurrency=args.concurrency,
                         adjudication=adjudication, sprt=sprt, seed=args.seed, event=args.event, mode=mode,
                         ratings=ratings, sources=sources, cpus=cpus)
    if mode != "match":
        config.pairings = gauntlet.pairings_for(mode, len(engines))
    return config


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish match`."""
    args = build_parser().parse_args(argv)
    quiet_python_chess(args.verbose)

    def warn(message: str) -> None:
        """Print a problem to stderr."""
        print(f"{PROG}: {message}", file=sys.stderr)

    try:
        config = build_config(args)
        if args.cluster is not None:
            check_cluster(args.cluster)
        if args.plot is not None:
            problem = check_matplotlib()
            if problem:
                raise ValueError(problem)
        stored = None
        if args.resume:
            if args.pgnout is None:
                raise ValueError("--resume needs --pgnout: the PGN of the match to continue")
            stored = journal.read_settings(journal.journal_path(args.pgnout))
        config.seed = choose_seed(config.seed, stored)
        pairs_needed = (config.games + 1) // 2
        if args.openings is not None:
            openings = load_openings(args.openings, pairs_needed, config.seed, args.chess960, warn)
        else:
            openings = [(0, chess.Board(chess960=args.chess960))] * pairs_needed
    except ValueError as exc:
        warn(str(exc))
        return EXIT_USAGE
    tasks = (make_tasks(config.games, openings) if config.mode == "match"
             else gauntlet.make_tasks(config.pairings, config.games, openings))
    try:
        files, played = journal.open_files(args.pgnout, journal_settings(config, args.openings, args.chess960),
                                           args.resume)
    except ValueError as exc:
        warn(f"cannot resume: {exc}")
        return EXIT_USAGE
    except OSError as exc:
        warn(f"cannot write '{args.pgnout}': {exc.strerror or exc}")
        return EXIT_USAGE
    say = lambda line: print(line, flush=True)  # noqa: E731
    try:
        state = new_state(config, played_names(played, config), len(tasks), played) if played else None
        if state is not None and (len(played) == len(tasks) or state.stop.is_set()):
            say(f"{PROG}: nothing left to play: {len(played)} of {len(tasks)} games played"
                + (", the SPRT has decided" if len(played) < len(tasks) else ""))
        else:
            with interruptible():
                state = (run_cluster_match(config, tasks, files, not args.no_progress, say, args.cluster, args.verbose,
                                           played) if args.cluster is not None
                         else run_match(config, tasks, files, not args.no_progress, say, played))
    except EngineStartError as exc:
        warn(str(exc))
        files.close()
        if not played and args.pgnout is not None:  # nothing was played: leave no journal to refuse a rerun
            for path in (args.pgnout, journal.journal_path(args.pgnout)):
                path.unlink(missing_ok=True)
        return EXIT_ENGINE
    except KeyboardInterrupt:  # before the games began (the engines starting): nothing to count
        warn("interrupted by the user before the games began")
        return EXIT_INTERRUPTED
    finally:
        files.close()
    if isinstance(state, gauntlet.GauntletState):
        summary = gauntlet.gauntlet_summary(state, config.sources)
        gauntlet.print_gauntlet_summary(summary, say)
    else:
        summary = summary_dict(state)
        print_summary(state, say)
    if args.pgnout:
        print(f"PGN: {args.pgnout}")
    status = EXIT_INTERRUPTED if state.abort.is_set() else EXIT_ENGINE if state.errors else EXIT_OK
    if args.report:
        try:
            args.report.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            warn(f"cannot write '{args.report}': {exc.strerror or exc}")
            status = EXIT_USAGE
    if args.plot and isinstance(state, MatchState):
        try:
            plot_history(args.plot, state.history, state.names)
            print(f"Plot: {args.plot}")
        except (OSError, ValueError) as exc:
            warn(f"cannot write plot '{args.plot}': {exc}")
            status = EXIT_USAGE
    return status
