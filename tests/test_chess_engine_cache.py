"""Engine results reused across calls and runs: same answers as a fresh search, keyed on all that matters."""

import chess
import chess.engine

from otbench.envs.chess.engine import Engine, EnginePool, engine_identity, find_stockfish
from otbench.envs.chess.engine_cache import EngineCache, score_from_json, score_to_json, search_key

MIDDLEGAME = "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10"


def test_scores_survive_json_exactly():
    for score in (chess.engine.PovScore(chess.engine.Cp(35), chess.WHITE),
                  chess.engine.PovScore(chess.engine.Cp(-410), chess.BLACK),
                  chess.engine.PovScore(chess.engine.Mate(3), chess.WHITE),
                  chess.engine.PovScore(chess.engine.Mate(-2), chess.BLACK),
                  chess.engine.PovScore(chess.engine.Mate(0), chess.WHITE),
                  chess.engine.PovScore(chess.engine.MateGiven, chess.BLACK)):
        back = score_from_json(score_to_json(score))
        assert back == score and back.white().score(mate_score=10_000) == score.white().score(mate_score=10_000)


def test_the_key_holds_the_moves_that_can_repeat_but_not_those_before_an_irreversible_move():
    shuffled = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):  # back to the start position: a repetition is now possible
        shuffled.push_uci(uci)
    fresh = chess.Board()
    assert shuffled.epd() == fresh.epd() and search_key(shuffled) != search_key(fresh)
    after_pawn = chess.Board()
    for uci in ("g1f3", "g8f6", "e2e4"):
        after_pawn.push_uci(uci)
    assert search_key(after_pawn) == f"{after_pawn.fen()}|"  # the pawn move cut the history off
    assert search_key(chess.Board(MIDDLEGAME)) != search_key(chess.Board(MIDDLEGAME.replace("0 10", "3 12")))


def test_results_from_the_cache_file_equal_a_fresh_search_and_need_no_search(tmp_path):
    path, stockfish = tmp_path / "engine.sqlite", find_stockfish()
    board = chess.Board(MIDDLEGAME)
    moves = sorted(board.legal_moves, key=chess.Move.uci)[:3]
    with Engine(stockfish, EngineCache(engine_identity(stockfish), path)) as first:
        fresh = (first.best_move(board, 6), first.evaluate(board, 6), first.evaluate_moves(board, moves, 6))
        first.cache.close()
    cache = EngineCache(engine_identity(stockfish), path)
    with Engine(stockfish, cache) as second:
        again = (second.best_move(board, 6), second.evaluate(board, 6), second.evaluate_moves(board, moves, 6))
    assert again == fresh
    assert (cache.hits, cache.misses) == (3, 0)
    other_settings = EngineCache(engine_identity(stockfish) + ":hash=32", path)
    assert other_settings.get(other_settings.key("play", 6, board)) is None


def test_engines_of_a_pool_share_one_cache(tmp_path):
    board = chess.Board(MIDDLEGAME)
    with EnginePool(find_stockfish(), size=2, cache_path=tmp_path / "pool.sqlite") as pool:
        with pool.engine() as one, pool.engine() as two:
            assert one.cache is two.cache
            assert one.best_move(board, 4) == two.best_move(board, 4)
        assert pool.cache.hits == 1


def test_a_damaged_cache_file_is_set_aside_and_started_again(tmp_path):
    path = tmp_path / "engine.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    cache = EngineCache("stockfish", path)
    key = cache.key("play", 4, chess.Board())
    cache.put(key, "e2e4")
    cache.close()
    assert (tmp_path / "engine.damaged").exists()
    assert EngineCache("stockfish", path).get(key) == "e2e4"


def test_an_entry_that_does_not_decode_is_searched_again_and_replaced():
    cache = EngineCache("stockfish")
    key = cache.key("analyse", 4, chess.Board())
    cache.put(key, "not a score")
    fresh = chess.engine.PovScore(chess.engine.Cp(20), chess.WHITE)
    assert cache.through(key, lambda: fresh, score_to_json, score_from_json) == fresh
    assert score_from_json(cache.get(key)) == fresh
