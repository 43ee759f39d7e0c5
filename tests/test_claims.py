"""A cell claimed on one machine is one worker's at a time, and free again once that worker ends, however it ends."""

import multiprocessing

from otbench.study.claims import FileClaims


def test_a_held_claim_is_refused_to_another_worker_and_free_once_released(tmp_path):
    claims = FileClaims(tmp_path / "claims")
    with claims.claim("cell") as held:
        assert held
        with FileClaims(tmp_path / "claims").claim("cell") as other:  # another worker of this machine asks
            assert not other
        with claims.claim("another cell") as elsewhere:
            assert elsewhere
    with FileClaims(tmp_path / "claims").claim("cell") as again:
        assert again


def _hold_and_die(directory):
    with FileClaims(directory).claim("cell"):
        import os

        os._exit(1)


def test_a_claim_is_free_once_its_worker_died_holding_it(tmp_path):
    holder = multiprocessing.get_context("spawn").Process(target=_hold_and_die, args=(tmp_path,))
    holder.start()
    holder.join(timeout=60)
    with FileClaims(tmp_path).claim("cell") as held:
        assert held
