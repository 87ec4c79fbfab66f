"""docs/protocol.md sections 1 and 3, read independently: the committed vectors rechecked from
the spec text alone, with hashlib and rbcl and nothing from buraco_p2p.

If the spec and the code ever disagree on a byte (a frame, a label, an order, an equation), one
of these fails. They recompute the Schnorr proofs (hedged nonce included), the Chaum-Pedersen
challenges, the batch proof's weights and challenge, the shuffle's generators, its challenges
u_1..u_N and c, and every CheckProof equation of 1.7 (at 8 and 162 cards), replay whole deck
sessions at two and three seats (1.8), and check the card ids, the rules wire-form table and the
deal layout of section 3 against game.json.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rbcl

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes(32)


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


# ---- section 1.1: encodings and group operations --------------------------------------------


def u32be(n: int) -> bytes:
    return n.to_bytes(4, "big")


def u64be(n: int) -> bytes:
    return n.to_bytes(8, "big")


def lp(x: bytes) -> bytes:
    return u32be(len(x)) + x


def scalar(b: bytes) -> int:
    """A received scalar: 32 bytes little-endian, < l, never reduced."""
    assert len(b) == 32
    v = int.from_bytes(b, "little")
    assert v < L
    return v


def scalar_from_hash(b: bytes) -> int:
    return int.from_bytes(b, "little") % L


def point(b: bytes) -> bytes:
    """A received point: canonical (bit 255 clear, libsodium decodes it), not the identity."""
    assert len(b) == 32 and b != IDENTITY and not b[31] & 0x80
    assert rbcl.crypto_core_ristretto255_is_valid_point(b)
    return b


def add(*ps: bytes) -> bytes:
    acc = IDENTITY
    for p in ps:
        acc = bytes(rbcl.crypto_core_ristretto255_add(acc, p))
    return acc


def sub(a: bytes, b: bytes) -> bytes:
    return bytes(rbcl.crypto_core_ristretto255_sub(a, b))


def mul(k: int, p: bytes) -> bytes:
    if p == IDENTITY:
        return IDENTITY
    s = (k % L).to_bytes(32, "little")
    return bytes(rbcl.crypto_scalarmult_ristretto255_allow_scalar_zero(s, p))


def base(k: int) -> bytes:
    s = (k % L).to_bytes(32, "little")
    return bytes(rbcl.crypto_scalarmult_ristretto255_base_allow_scalar_zero(s))


def hash_to_group(domain: bytes, msg: bytes) -> bytes:
    digest = hashlib.sha512(lp(domain) + lp(msg)).digest()
    return bytes(rbcl.crypto_core_ristretto255_from_hash(digest))


G = base(1)


def chunks(b: bytes, size: int = 32) -> list[bytes]:
    assert len(b) % size == 0
    return [b[i : i + size] for i in range(0, len(b), size)]


# ---- section 1.2: the transcript ------------------------------------------------------------


def frame(op: int, label: bytes, data: bytes) -> bytes:
    return bytes([op]) + u32be(len(label)) + label + u32be(len(data)) + data


class SpecTranscript:
    """The frames of 1.2, kept as bytes; a challenge hashes everything so far."""

    def __init__(self, protocol: bytes, ctx: dict[str, Any]) -> None:
        self.data = (
            frame(0, b"protocol", protocol)
            + frame(0, b"table_id", bytes.fromhex(ctx["table_id"]))
            + frame(0, b"hand", u64be(ctx["hand"]))
            + frame(0, b"log_index", u64be(ctx["log_index"]))
            + frame(0, b"prover", bytes.fromhex(ctx["prover"]))
        )

    def append(self, label: bytes, value: bytes) -> None:
        self.data += frame(1, label, value)

    def challenge(self, label: bytes) -> int:
        self.data += frame(2, label, b"")
        return scalar_from_hash(hashlib.sha512(self.data).digest())


def test_spec_transcript_matches_the_transcript_vector() -> None:
    """The helper above reproduces every challenge of transcript.json, the fork included (1.2:
    the child is the parent's frames, then frame(0x03, label, ""), then the challenge named by
    challenge_label; the parent goes on unchanged), so the checks below test the proofs' item
    lists, not the helper."""
    v = load("transcript.json")
    t = SpecTranscript(bytes.fromhex(v["protocol_label"]), v["context"])
    checked = 0
    for op in v["operations"]:
        label = bytes.fromhex(op["label"])
        if op["op"] == "append":
            t.append(label, bytes.fromhex(op["data"]))
            continue
        if op["op"] == "challenge":
            result = t.challenge(label)
        else:
            assert op["op"] == "fork-then-challenge"
            child = SpecTranscript(b"", v["context"])
            child.data = t.data + frame(3, label, b"")
            result = child.challenge(bytes.fromhex(op["challenge_label"]))
        assert result.to_bytes(32, "little").hex() == op["result"]
        checked += 1
    assert checked == 3


# ---- section 1.3: Schnorr --------------------------------------------------------------------


def test_schnorr_challenges_follow_the_spec_text() -> None:
    v = load("keys.json")
    assert bytes.fromhex(v["protocol_label"]) == b"buraco-p2p/schnorr/v1"
    assert load("group.json")["base_point"] == G.hex()
    for p in v["players"]:
        y = point(bytes.fromhex(p["public"]))
        proof = bytes.fromhex(p["proof"])
        c, s = scalar(proof[:32]), scalar(proof[32:])
        r = sub(base(s), mul(c, y))  # R' = s*G - c*Y
        t = SpecTranscript(b"buraco-p2p/schnorr/v1", p["context"])
        t.append(b"G", G)
        t.append(b"Y", y)
        t.append(b"R", r)
        assert t.challenge(b"c") == c
        # The same proof under another prover's context does not check.
        other = dict(p["context"], prover=b"someone-else".hex())
        t = SpecTranscript(b"buraco-p2p/schnorr/v1", other)
        t.append(b"G", G)
        t.append(b"Y", y)
        t.append(b"R", r)
        assert t.challenge(b"c") != c
    total = add(*(bytes.fromhex(p["public"]) for p in v["players"]))
    assert total.hex() == v["table_key"]


def drbg(seed: bytes, n: int) -> bytes:
    """The first n bytes of the deterministic stream of 1.1."""
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.shake_256(lp(b"buraco-p2p/drbg/v1") + lp(seed) + u64be(i)).digest(64)
        i += 1
    return out[:n]


def test_schnorr_nonces_follow_the_spec_text() -> None:
    """keys.json's provers: x from the first 64 drbg bytes, k = nonce(x) (1.2) with the next 32
    as rnd, and s = k + c*x."""
    v = load("keys.json")
    for p in v["players"]:
        stream = drbg(bytes.fromhex(p["drbg_seed"]), 96)
        x = scalar_from_hash(stream[:64])
        assert x != 0 and x.to_bytes(32, "little").hex() == p["secret"]
        y = base(x)
        assert y.hex() == p["public"]
        t = SpecTranscript(b"buraco-p2p/schnorr/v1", p["context"])
        t.append(b"G", G)
        t.append(b"Y", y)
        d = hashlib.sha512(t.data + frame(2, b"nonce", b"")).digest()
        k = scalar_from_hash(
            hashlib.sha512(
                lp(b"buraco-p2p/nonce/v1") + x.to_bytes(32, "little") + stream[64:96] + d
            ).digest()
        )
        assert k != 0
        t.append(b"R", base(k))
        c = t.challenge(b"c")
        proof = bytes.fromhex(p["proof"])
        assert proof == c.to_bytes(32, "little") + ((k + c * x) % L).to_bytes(32, "little")


# ---- section 1.4: Chaum-Pedersen, batch, opening -------------------------------------------


def test_chaum_pedersen_challenges_follow_the_spec_text() -> None:
    v = load("shares.json")
    assert bytes.fromhex(v["protocol_label"]) == b"buraco-p2p/cp/v1"
    ct = bytes.fromhex(v["ciphertext"])
    c1, c2 = point(ct[:32]), point(ct[32:])
    total = IDENTITY
    for sh in v["shares"]:
        y = point(bytes.fromhex(sh["public"]))
        wire = bytes.fromhex(sh["share"])
        d, c, s = point(wire[:32]), scalar(wire[32:64]), scalar(wire[64:])
        a = sub(base(s), mul(c, y))  # A' = s*G - c*Y_j
        b = sub(mul(s, c1), mul(c, d))  # B' = s*c1 - c*D_j
        t = SpecTranscript(b"buraco-p2p/cp/v1", sh["context"])
        for label, value in ((b"G", G), (b"Y", y), (b"c1", c1), (b"c2", c2), (b"D", d)):
            t.append(label, value)
        t.append(b"A", a)
        t.append(b"B", b)
        assert t.challenge(b"c") == c
        total = add(total, d)
    m = sub(c2, total)
    assert m == hash_to_group(b"buraco-p2p/card/v1/", str(v["card"]).encode("ascii"))


def check_batch(ctx: dict[str, Any], y: bytes, cts: list[bytes], wire: bytes) -> list[bytes]:
    """Section 1.4's batch proof checked from the spec text; returns the shares it carries."""
    n = len(cts)
    assert len(wire) == 32 * n + 64
    ds = [point(d) for d in chunks(wire[: 32 * n])]
    c, s = scalar(wire[32 * n : 32 * n + 32]), scalar(wire[32 * n + 32 :])
    t = SpecTranscript(b"buraco-p2p/cp-batch/v1", ctx)
    t.append(b"G", G)
    t.append(b"Y", y)
    t.append(b"n", u64be(n))
    t.append(b"ciphertexts", b"".join(cts))
    t.append(b"D", b"".join(ds))
    z = [t.challenge(b"z") for _ in range(n)]
    big_c = add(*(mul(zi, point(ct[:32])) for zi, ct in zip(z, cts, strict=True)))
    big_e = add(*(mul(zi, d) for zi, d in zip(z, ds, strict=True)))
    t.append(b"A", sub(base(s), mul(c, y)))
    t.append(b"B", sub(mul(s, big_c), mul(c, big_e)))
    assert t.challenge(b"c") == c
    return ds


def test_batch_share_proof_follows_the_spec_text() -> None:
    b = load("shares.json")["batch"]
    assert bytes.fromhex(b["protocol_label"]) == b"buraco-p2p/cp-batch/v1"
    y = point(bytes.fromhex(b["public"]))
    cts = [bytes.fromhex(c) for c in b["ciphertexts"]]
    check_batch(b["context"], y, cts, bytes.fromhex(b["batch"]))


# ---- section 1.7: the proof of shuffle -----------------------------------------------------


def shuffle_generators(table_id: bytes, hand: int, n: int) -> list[bytes]:
    """g_i = hash_to_group(domain, u32be(len T) || T || u64be(hand) || u32be(N) || u32be(i)),
    i = 0..N; h = g_0, h_i = g_i."""
    return [
        hash_to_group(
            b"buraco-p2p/shuffle/v1/generators", lp(table_id) + u64be(hand) + u32be(n) + u32be(i)
        )
        for i in range(n + 1)
    ]


def check_shuffle(
    ctx: dict[str, Any],
    y: bytes,
    deck_in: bytes,
    deck_out: bytes,
    proof: bytes,
    *,
    drop_generators: bool = False,
) -> list[bool]:
    """CheckProof of 1.7 from the spec text: one flag per equation (t1, t2, t3, t4_1, t4_2,
    then every t_hat_i). With `drop_generators` the u_i are computed from a transcript that
    leaves the generators out, which must make some equation fail."""
    table_id = bytes.fromhex(ctx["table_id"])
    e_in = [(c[:32], c[32:]) for c in chunks(deck_in, 64)]
    e_out = [(point(c[:32]), point(c[32:])) for c in chunks(deck_out, 64)]
    n = len(e_in)
    assert len(e_out) == n
    gens = shuffle_generators(table_id, ctx["hand"], n)
    h, hs = gens[0], gens[1:]

    assert len(proof) == (5 * n + 9) * 32
    els = chunks(proof)
    cs = [point(p) for p in els[0:n]]
    chain = [point(p) for p in els[n : 2 * n]]
    t1, t2, t3, t41, t42 = (point(p) for p in els[2 * n : 2 * n + 5])
    t_hat = [point(p) for p in els[2 * n + 5 : 3 * n + 5]]
    s1, s2, s3, s4 = (scalar(x) for x in els[3 * n + 5 : 3 * n + 9])
    s_hat = [scalar(x) for x in els[3 * n + 9 : 4 * n + 9]]
    s_prime = [scalar(x) for x in els[4 * n + 9 : 5 * n + 9]]

    t = SpecTranscript(b"buraco-p2p/shuffle/v1", ctx)
    t.append(b"n", u64be(n))
    t.append(b"table_key", y)
    if not drop_generators:
        t.append(b"generators", b"".join([h, *hs]))
    t.append(b"input", deck_in)
    t.append(b"output", deck_out)
    t.append(b"commitments", b"".join(cs))
    u = [t.challenge(b"u") for _ in range(n)]
    t.append(b"chain", b"".join(chain))
    t.append(b"t", t1 + t2 + t3 + t41 + t42)
    t.append(b"t_hat", b"".join(t_hat))
    c = t.challenge(b"c")

    u_prod = 1
    for ui in u:
        u_prod = u_prod * ui % L
    ok = [
        t1 == sub(base(s1), mul(c, sub(add(*cs), add(*hs)))),
        t2 == sub(base(s2), mul(c, sub(chain[-1], mul(u_prod, h)))),
        t3
        == sub(
            add(base(s3), *(mul(sp, hi) for sp, hi in zip(s_prime, hs, strict=True))),
            mul(c, add(*(mul(ui, ci) for ui, ci in zip(u, cs, strict=True)))),
        ),
    ]
    for k, (gen, t4) in enumerate(((G, t41), (y, t42))):
        lhs = add(*(mul(sp, e[k]) for sp, e in zip(s_prime, e_out, strict=True)))
        rhs = add(*(mul(ui, e[k]) for ui, e in zip(u, e_in, strict=True)))
        ok.append(t4 == sub(sub(lhs, mul(s4, gen)), mul(c, rhs)))
    prev = h
    for i in range(n):
        ok.append(t_hat[i] == sub(add(base(s_hat[i]), mul(s_prime[i], prev)), mul(c, chain[i])))
        prev = chain[i]
    return ok


def check_rerandomisation(v: dict[str, Any]) -> None:
    """The output really is the input permuted as the vector says (output i takes input
    perm[i]) and re-randomised by randomness[i]."""
    y = bytes.fromhex(v["table_key"])
    e_in = [(c[:32], c[32:]) for c in chunks(bytes.fromhex(v["input_deck"]), 64)]
    e_out = [(c[:32], c[32:]) for c in chunks(bytes.fromhex(v["output_deck"]), 64)]
    perm = v["permutation"]
    assert sorted(perm) == list(range(v["n"]))
    for i, (c1, c2) in enumerate(e_out):
        r = scalar(bytes.fromhex(v["randomness"][i]))
        src_c1, src_c2 = e_in[perm[i]]
        assert c1 == add(src_c1, base(r))
        assert c2 == add(src_c2, mul(r, y))


@pytest.mark.parametrize("name", ["shuffle.json", "shuffle_162.json"])
def test_shuffle_vectors_follow_the_spec_text(name: str) -> None:
    v = load(name)
    n = v["n"]
    ctx = {k: v[k] for k in ("table_id", "hand", "log_index", "prover")}
    gens = shuffle_generators(bytes.fromhex(v["table_id"]), v["hand"], n)
    assert [g.hex() for g in gens] == v["generators"]
    y = point(bytes.fromhex(v["table_key"]))
    deck_in = bytes.fromhex(v["input_deck"])
    deck_out = bytes.fromhex(v["output_deck"])
    assert all(c[:32] == IDENTITY for c in chunks(deck_in, 64))  # the open deck (1.6)
    proof = bytes.fromhex(v["proof"])
    assert all(check_shuffle(ctx, y, deck_in, deck_out, proof))
    # The u_i are bound to everything before them: leave the generators out of the transcript
    # and the proof no longer checks.
    assert not all(check_shuffle(ctx, y, deck_in, deck_out, proof, drop_generators=True))
    check_rerandomisation(v)


def test_the_162_card_deck_is_the_card_points_of_ids_0_to_161() -> None:
    """1.4 and 1.6: the six-seat open deck is (identity, M_c) for c = 0..161, every M_c
    distinct; cards.json lists the same points."""
    v = load("shuffle_162.json")
    deck_in = chunks(bytes.fromhex(v["input_deck"]), 64)
    points = [hash_to_group(b"buraco-p2p/card/v1/", str(c).encode("ascii")) for c in range(162)]
    assert [c[32:] for c in deck_in] == points
    assert len(set(points)) == 162
    assert [bytes.fromhex(c["point"]) for c in load("cards.json")["cards"]] == points


# ---- section 1.8: a whole deck session at two and three seats --------------------------------


def check_schnorr(ctx: dict[str, Any], announcement: bytes) -> bytes:
    y = point(announcement[:32])
    c, s = scalar(announcement[32:64]), scalar(announcement[64:])
    t = SpecTranscript(b"buraco-p2p/schnorr/v1", ctx)
    t.append(b"G", G)
    t.append(b"Y", y)
    t.append(b"R", sub(base(s), mul(c, y)))
    assert t.challenge(b"c") == c
    return y


@pytest.mark.parametrize("name", ["deck_2.json", "deck_3.json"])
def test_deck_session_vectors_follow_the_spec_text(name: str) -> None:
    """Replays a deck session from 1.3, 1.4, 1.6, 1.7 and 1.8 alone: keys in any order, then N
    shuffles in seat order starting from the open deck, then the deal: each seat's batch
    covers exactly the N-1 other hands, and each owner opens its cards with its own share."""
    v = load(name)
    n, size = v["seats"], v["deck_size"]
    players = [bytes.fromhex(p) for p in v["players"]]
    assert all(len(p) == 32 for p in players) and len(set(players)) == n

    def ctx(entry: dict[str, Any]) -> dict[str, Any]:
        # The prover is the player id of the seat that signed the entry.
        assert entry["message"]["seat"] == entry["sender"]
        return {
            "table_id": v["table_id"],
            "hand": v["hand"],
            "log_index": entry["index"],
            "prover": players[entry["sender"]].hex(),
        }

    log = v["log"]
    assert [e["index"] for e in log] == list(range(log[0]["index"], log[0]["index"] + 3 * n))
    keys: dict[int, bytes] = {}
    for e in log[:n]:
        assert e["message"]["type"] == "deck/key"
        keys[e["sender"]] = check_schnorr(ctx(e), bytes.fromhex(e["message"]["key"]))
    assert sorted(keys) == list(range(n))
    y = add(*keys.values())
    assert y.hex() == v["table_key"]

    points = [hash_to_group(b"buraco-p2p/card/v1/", str(c).encode("ascii")) for c in range(size)]
    deck = b"".join(IDENTITY + m for m in points)
    for seat, e in enumerate(log[n : 2 * n]):
        msg = e["message"]
        assert msg["type"] == "deck/shuffle" and e["sender"] == seat
        out = bytes.fromhex(msg["deck"])
        assert all(check_shuffle(ctx(e), y, deck, out, bytes.fromhex(msg["proof"])))
        deck = out
    cts = chunks(deck, 64)

    order = v["play_order"]
    hands = {order[pos]: slots for pos, slots in enumerate(v["hands_in_play_order"])}
    shares: dict[int, dict[int, bytes]] = {}
    for e in log[2 * n :]:
        msg = e["message"]
        seat = e["sender"]
        assert msg["type"] == "deck/shares"
        owed = sorted(s for other, slots in hands.items() if other != seat for s in slots)
        assert msg["slots"] == owed
        ds = check_batch(ctx(e), keys[seat], [cts[s] for s in owed], bytes.fromhex(msg["batch"]))
        for slot, d in zip(owed, ds, strict=True):
            shares.setdefault(slot, {})[seat] = d
    for seat in range(n):
        x = scalar(bytes.fromhex(v["secrets"][seat]))
        assert base(x) == keys[seat]
        seen = []
        for slot in sorted(hands[seat]):
            c1, c2 = cts[slot][:32], cts[slot][32:]
            assert seat not in shares[slot] and len(shares[slot]) == n - 1
            m = sub(c2, add(mul(x, c1), *shares[slot].values()))
            seen.append([slot, points.index(m)])
        assert seen == v["cards_seen"][seat]


# ---- section 3: card ids, the rules wire form, the deal layout -----------------------------

SPEC = VECTORS.parent.parent / "docs" / "protocol.md"


def spec_card_text(card_id: int, deck_size: int) -> str:
    """3.1: k packs then j jokers; id i < 52k is face i mod 52 of copy i div 52 + 1."""
    packs = {104: 2, 108: 2, 156: 3, 162: 3}[deck_size]
    if card_id >= 52 * packs:
        copy = card_id - 52 * packs + 1
        return "JK" if copy == 1 else f"JK#{copy}"
    suit, rank = divmod(card_id % 52, 13)
    face = "A23456789TJQK"[rank] + "SHDC"[suit]
    copy = card_id // 52 + 1
    return face if copy == 1 else f"{face}#{copy}"


def test_card_ids_follow_the_spec_text() -> None:
    game = load("game.json")
    assert game["card_ids"] == [spec_card_text(i, 108) for i in range(108)]
    assert game["card_ids_162"] == [spec_card_text(i, 162) for i in range(162)]
    assert game["card_ids_162"][104] == "AS#3" and game["card_ids"][104] == "JK"
    for c in load("cards.json")["cards"]:
        assert c["name_162"] == spec_card_text(c["id"], 162)
        assert c.get("name_108", None) == (spec_card_text(c["id"], 108) if c["id"] < 108 else None)
    for r in game["reveals"]:
        slot, card, public = r["wire"]
        kind = "public" if public else "private"
        assert r["name"] == f"{kind} reveal of slot {slot} as {spec_card_text(card, 108)}"


def rules_table() -> dict[str, tuple[str, str]]:
    """Section 3.2's table: key -> (msgpack type, value column)."""
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("### 3.2 ") : text.index("### 3.3 ")]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def test_rules_wire_forms_follow_the_spec_table() -> None:
    """Every preset's wire form in game.json, at every seat count, has exactly the keys of
    3.2's table, each value of the listed type, enumerations among the listed strings, ranks
    1..13 ascending, and three packs exactly at six seats."""
    table = rules_table()
    assert list(table) == sorted(table, key=lambda k: k.encode())
    game = load("game.json")
    presets = {**game["presets"], **game["presets_by_players"]}
    assert {p["wire"]["players"] for p in presets.values()} == {2, 3, 4, 6}
    for name, preset in presets.items():
        wire = preset["wire"]
        assert set(wire) == set(table), f"{name}: keys not in both: {set(wire) ^ set(table)}"
        for key, value in wire.items():
            kind, values = table[key]
            if kind == "bool":
                assert type(value) is bool, key
            elif kind == "int":
                assert type(value) is int, key
            elif kind == "int or str":
                assert type(value) is int or value == "half_target", key
            elif kind == "array of int":
                assert all(type(r) is int and 1 <= r <= 13 for r in value), key
                assert value == sorted(set(value)), key
            elif kind == "array of [int, int]":
                assert all(len(p) == 2 and all(type(x) is int for x in p) for p in value), key
            else:
                assert kind == "str" and type(value) is str, key
                listed = [v.strip('`"') for v in values.split(", ")]
                if all(v.startswith('`"') for v in values.split(", ")):
                    assert value in listed, key
        assert wire["v"] == 1 and wire["players"] in (2, 3, 4, 6)
        assert wire["deck_size"] in ((156, 162) if wire["players"] == 6 else (104, 108))


def test_four_seat_layouts_follow_the_spec_text() -> None:
    """3.3 at four seats: hands round the play order from slot 0, pots next, the face-up card
    next where there is one, the stock after."""
    for v in load("game.json")["layouts"].values():
        n, h, d = 4, 11, v["deck_size"]
        hands = [list(range(k, n * h, n)) for k in range(n)]
        pots = [list(range(n * h + i * 11, n * h + (i + 1) * 11)) for i in range(2)]
        nxt = n * h + 22
        face_up = nxt if v["face_up"] is not None else None
        stock = list(range(nxt + (face_up is not None), d))
        assert (v["hands_in_play_order"], v["pots"], v["face_up"], v["stock_in_draw_order"]) == (
            hands,
            pots,
            face_up,
            stock,
        )
    orders = load("game.json")["play_order"]
    for direction, step in (("clockwise", 1), ("counter_clockwise", -1)):
        assert orders[direction] == [
            [(dealer + step * (k + 1)) % 4 for k in range(4)] for dealer in range(4)
        ]


def test_layouts_at_other_seat_counts_follow_the_spec_text() -> None:
    """3.3 at two, three and six seats (where game.json lists them): 11 cards to each of N
    positions round the play order, then the pots in dealing order (two of 11 at two, 11 then
    18 at three, three of 11 at six), the face-up card, the stock; the play order for N."""
    game = load("game.json")
    pot_sizes = {2: [11, 11], 3: [11, 18], 6: [11, 11, 11]}
    for v in game.get("layouts_by_players", {}).values():
        n, d = v["players"], v["deck_size"]
        assert d in (104, 108, 156, 162) and (d >= 156) == (n == 6)  # three packs at six
        nxt = 11 * n
        pots = []
        for size in pot_sizes[n]:
            pots.append(list(range(nxt, nxt + size)))
            nxt += size
        face_up = nxt if v["face_up"] is not None else None
        assert v["hands_in_play_order"] == [list(range(k, 11 * n, n)) for k in range(n)]
        assert v["pots"] == pots and v["face_up"] == face_up
        assert v["stock_in_draw_order"] == list(range(nxt + (face_up is not None), d))
    for n, orders in game.get("play_order_by_players", {}).items():
        for direction, step in (("clockwise", 1), ("counter_clockwise", -1)):
            assert orders[direction] == [
                [(dealer + step * (k + 1)) % int(n) for k in range(int(n))]
                for dealer in range(int(n))
            ]
