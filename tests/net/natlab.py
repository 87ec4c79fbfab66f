"""A lab of home networks behind real NATs, made of Linux network namespaces and nftables.

Topology (every address lives only inside the lab's own namespaces)::

    inet:   bridge "br0" 198.51.100.0/24 (or another /24: `Lab(net=...)`) and 2001:db8:ff::/64;
            STUN responders at .2 and .3
    rtr<i>: "wan" 198.51.100.<10+i> / 2001:db8:ff::<10+i> on the bridge, "lan" 10.0.<i>.1 /
            2001:db8:<i>::1; nftables masquerades IPv4 out of "wan" (`fully-random` for a
            symmetric NAT) and drops anything inbound no inside host asked for, IPv4 and IPv6.
    home<i>: "eth0" 10.0.<i>.2 and 2001:db8:<i>::2, default routes via its router.

Code runs inside a namespace on a thread of its own (`run_in`): `setns(2)` switches only the
calling thread, so each peer gets a thread and its own trio loop, and every socket it makes
belongs to its home. Used by tests/net/test_natlab.py and benchmarks/internet.py.
"""

from __future__ import annotations

import ctypes
import hashlib
import ipaddress
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import trio
from cli_helpers import ENV, kill_leftovers, read_until

from buraco_p2p.net.reach.invite import Endpoint

CLONE_NEWNET = 0x40000000
STUN_PORT = 3478
T = TypeVar("T")


def unavailable() -> str | None:
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"the `{tool}` tool is not installed (apt-get install -y iproute2 nftables)"
    probe = f"bp-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` does not work here: {made.stderr.strip()}"
    try:
        nft = subprocess.run(
            ["ip", "netns", "exec", probe, "nft", "add", "table", "ip", "probe"],
            capture_output=True, text=True,
        )
        if nft.returncode != 0:
            return f"nftables does not work here: {nft.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _run(*args: str, stdin: str | None = None) -> None:
    done = subprocess.run(list(args), input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")


_ROUTER_RULES = """
table ip nat {{
    chain in_nat {{
        type nat hook prerouting priority -100; policy accept;
    }}
    chain out_nat {{
        type nat hook postrouting priority 100; policy accept;
        oifname "wan" masquerade{random}
    }}
}}
table inet guard {{
    chain pass_through {{
        type filter hook forward priority 0; policy drop;
        ct state established,related accept
        ct status dnat accept
        iifname "lan" accept
    }}
    chain to_router {{
        type filter hook input priority 0; policy drop;
        ct state established,related accept
        iifname "lan" accept
        iifname "lo" accept
        meta l4proto ipv6-icmp accept
    }}
}}
"""


@dataclass
class Home:
    index: int
    namespace: str
    router: str
    symmetric: bool
    net: str = "198.51.100"  # the lab's internet /24 (`Lab.net`)
    wan: str | None = None  # the router's public IPv4 address once `renumber` changed it

    @property
    def lan_ip(self) -> str:
        return f"10.0.{self.index}.2"

    @property
    def v6_ip(self) -> str:
        return f"2001:db8:{self.index}::2"

    @property
    def public_ip(self) -> str:
        return self.wan or f"{self.net}.{10 + self.index}"


@dataclass
class Lab:
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    homes: list[Home] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    # The lab's internet, a /24 by its first three octets: the documentation range, or one
    # of a provider's shared space behind a carrier-grade NAT ("100.64.0", RFC 6598).
    net: str = "198.51.100"

    @property
    def stun_ips(self) -> tuple[str, str]:
        return f"{self.net}.2", f"{self.net}.3"

    @property
    def inet(self) -> str:
        return f"bn{self.tag}-inet"

    def _ns(self, name: str) -> str:
        full = f"bn{self.tag}-{name}"
        _run("ip", "netns", "add", full)
        self.namespaces.append(full)
        _run("ip", "-n", full, "link", "set", "lo", "up")
        # No duplicate address detection: addresses (link-local too) usable at once.
        for conf in ("all", "default"):
            _run("ip", "netns", "exec", full, "sysctl", "-qw", f"net.ipv6.conf.{conf}.accept_dad=0")
        return full

    def __enter__(self) -> Lab:
        try:
            self._build()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _build(self) -> None:
        inet = self._ns("inet")
        _run("ip", "-n", inet, "link", "add", "name", "br0", "type", "bridge")
        _run("ip", "-n", inet, "link", "set", "br0", "up")
        for ip in self.stun_ips:
            _run("ip", "-n", inet, "addr", "add", f"{ip}/24", "dev", "br0")
        _run("ip", "-n", inet, "addr", "add", "2001:db8:ff::2/64", "dev", "br0", "nodad")

    def __exit__(self, *exc: object) -> None:
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.namespaces.clear()

    def add_home(self, *, symmetric: bool = False) -> Home:
        i = len(self.homes) + 1
        rtr, home = self._ns(f"r{i}"), self._ns(f"h{i}")
        inet = self.inet
        _run("ip", "-n", inet, "link", "add", f"w{i}", "type", "veth", "peer", "name", "wan",
             "netns", rtr)
        _run("ip", "-n", inet, "link", "set", f"w{i}", "master", "br0", "up")
        _run("ip", "-n", rtr, "link", "add", "lan", "type", "veth", "peer", "name", "eth0",
             "netns", home)
        for ns, dev, addrs in (
            (rtr, "wan", [f"{self.net}.{10 + i}/24", f"2001:db8:ff::{10 + i}/64"]),
            (rtr, "lan", [f"10.0.{i}.1/24", f"2001:db8:{i}::1/64"]),
            (home, "eth0", [f"10.0.{i}.2/24", f"2001:db8:{i}::2/64"]),
        ):
            for addr in addrs:
                extra = ["nodad"] if ":" in addr else []
                _run("ip", "-n", ns, "addr", "add", addr, "dev", dev, *extra)
            _run("ip", "-n", ns, "link", "set", dev, "up")
        _run("ip", "netns", "exec", rtr, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        _run("ip", "netns", "exec", rtr, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
        _run("ip", "-n", home, "route", "add", "default", "via", f"10.0.{i}.1")
        _run("ip", "-n", home, "-6", "route", "add", "default", "via", f"2001:db8:{i}::1")
        # Every home's IPv6 prefix is routed to its router over the shared segment.
        for other in self.homes:
            j = other.index
            _run("ip", "-n", rtr, "-6", "route", "add", f"2001:db8:{j}::/64",
                 "via", f"2001:db8:ff::{10 + j}")
            _run("ip", "-n", other.router, "-6", "route", "add", f"2001:db8:{i}::/64",
                 "via", f"2001:db8:ff::{10 + i}")
        _run("ip", "-n", inet, "-6", "route", "add", f"2001:db8:{i}::/64",
             "via", f"2001:db8:ff::{10 + i}")
        rules = _ROUTER_RULES.format(random=" fully-random" if symmetric else "")
        _run("ip", "netns", "exec", rtr, "nft", "-f", "-", stdin=rules)
        made = Home(i, home, rtr, symmetric, self.net)
        self.homes.append(made)
        return made

    def stun_servers(self) -> tuple[Endpoint, Endpoint]:
        first, second = self.stun_ips
        return (Endpoint.parse(first, STUN_PORT), Endpoint.parse(second, STUN_PORT))


def add_v6_home(lab: Lab) -> Home:
    """A home on IPv6 alone: its global address 2001:db8:<i>::2 behind the router's stateful
    firewall (no NAT on IPv6), which drops every connection from outside nobody inside asked
    for; the home's IPv4 address and default route are taken away."""
    home = lab.add_home()
    _run("ip", "-n", home.namespace, "route", "del", "default")
    _run("ip", "-n", home.namespace, "addr", "del", f"{home.lan_ip}/24", "dev", "eth0")
    return home


def open_pinhole(home: Home, port: int) -> None:
    """`home`'s router lets connections from outside in to its IPv6 address at `port`, as an
    IPv6 router's firewall does for a PCP MAP request (RFC 6887 section 11) or a rule by hand."""
    _run("ip", "netns", "exec", home.router, "nft", "insert", "rule", "inet", "guard",
         "pass_through", "ip6", "daddr", home.v6_ip, "tcp", "dport", str(port),
         "accept")  # fmt: skip


def _enter(namespace: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/var/run/netns/{namespace}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into {namespace}: {os.strerror(err)}")
    finally:
        os.close(fd)


class InNamespace:
    """`fn` running on its own thread with its own trio loop, inside `namespace`."""

    def __init__(self, namespace: str, fn: Callable[[], Awaitable[Any]]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None

        def main() -> None:
            try:
                _enter(namespace)

                async def go() -> None:
                    self.result = await fn()

                trio.run(go)
            except BaseException as exc:  # handed to join()
                self.error = exc

        self.thread = threading.Thread(target=main, daemon=True)
        self.thread.start()

    def join(self, timeout: float = 60.0) -> Any:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise TimeoutError("a namespace thread did not finish in time")
        if self.error is not None:
            raise self.error
        return self.result


def run_in(namespace: str, fn: Callable[[], Awaitable[T]]) -> InNamespace:
    return InNamespace(namespace, fn)


async def wait_event(event: threading.Event) -> None:
    """Wait for a thread's event from a namespace's trio loop without a worker thread.

    Linux threads inherit their creator's network namespace, and trio keeps its worker
    threads in one process-wide cache: a worker started here would stay in the lab's
    namespace and later run another test's blocking call (a child process, a name lookup)
    there. So code running in a namespace polls instead of calling `trio.to_thread`.
    """
    while not event.is_set():
        await trio.sleep(0.01)


def punch_all(lab: Lab, homes: list[Home], port: int, window: float = 3.0) -> dict[
    tuple[int, int], str
]:
    """Every pair of `homes` punches a link and runs the handshake over it, all at once.

    Each home asks the lab's STUN responders about one local `port` and punches every peer
    from it (a cone NAT keeps one public port for it). Returns, per pair (i, j) with i < j,
    "direct" when both ends exchanged a message over the handshaken link, else the error.
    The threading barrier stands for the candidate exchange and the coordinator's "dial now".
    """
    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.channel.link import handshake
    from buraco_p2p.net.reach.punch import simultaneous_open
    from buraco_p2p.net.reach.stun import probe

    secret, table = secrets.token_bytes(16), secrets.token_bytes(16)
    ids = {h.index: Identity.generate(f"p{h.index}") for h in homes}
    seen: dict[int, Endpoint] = {}
    barrier = threading.Barrier(len(homes), timeout=30)
    results: dict[tuple[int, int], list[str]] = {}
    lock = threading.Lock()

    def side(home: Home) -> Callable[[], Awaitable[None]]:
        me = home.index

        async def link_to(other: Home) -> None:
            pair = (min(me, other.index), max(me, other.index))
            outcome = "direct"
            try:
                stream = await simultaneous_open(port, seen[other.index], window=window)
                link = await handshake(
                    stream, ids[me], room_secret=secret, table_id=table,
                    initiator=me < other.index, expected_peer=ids[other.index].public, timeout=5,
                )
                async with link:
                    await link.send({"from": me})
                    got = await link.receive()
                    if got != {"from": other.index}:
                        outcome = f"wrong message {got!r}"
            except Exception as exc:  # reported per pair, as the benchmark counts them
                outcome = f"{type(exc).__name__}: {exc}"
            with lock:
                results.setdefault(pair, []).append(outcome)

        async def go() -> None:
            try:
                seen[me] = (await probe(port, lab.stun_servers()))[0]
            finally:
                barrier.wait()
            async with trio.open_nursery() as nursery:
                for other in homes:
                    if other.index != me and other.index in seen:
                        nursery.start_soon(link_to, other)

        return go

    threads = [run_in(h.namespace, side(h)) for h in homes]
    for t in threads:
        t.join(60)
    return {
        pair: "direct" if outcomes == ["direct", "direct"] else "; ".join(
            o for o in outcomes if o != "direct"
        ) or "one side only"
        for pair, outcomes in sorted(results.items())
    }


def portmap_responder(
    home: Home, stop: threading.Event, *, pcp: bool = True, log: list[bytes] | None = None,
    delete_result: int = 0,
) -> InNamespace:
    """The router's own PCP (or, with `pcp=False`, NAT-PMP only) responder on lan:5351.

    A granted mapping is a real nftables DNAT rule on the router: wan:port -> home:port,
    for the lifetime asked; a request of lifetime 0 (a deletion) grants nothing and is
    answered with lifetime 0 and result `delete_result` (PCP; 2 is NOT_AUTHORIZED, what a
    router answers a deletion from another owner). Every request received is appended to
    `log` if given.
    """
    import struct

    def grant(port: int) -> None:
        # For the router's own address only: after `renumber` the old one leads nowhere.
        _run("ip", "netns", "exec", home.router, "nft", "add", "rule", "ip", "nat", "in_nat",
             "iifname", "wan", "ip", "daddr", home.public_ip, "tcp", "dport", str(port),
             "dnat", "to", f"{home.lan_ip}:{port}")

    def answer(data: bytes) -> bytes | None:
        public = ipaddress.IPv4Address(home.public_ip)  # as it is now (`renumber`)
        if log is not None:
            log.append(data)
        if data[:1] == b"\x02" and len(data) >= 60:
            if not pcp:
                return struct.pack(">BBHI", 0, 0x80 | data[1], 1, 1)
            port = struct.unpack(">H", data[40:42])[0]
            lifetime = struct.unpack(">I", data[4:8])[0]
            if lifetime:
                grant(port)
            result = 0 if lifetime else delete_result
            head = struct.pack(">BBBBII", 2, 0x81, 0, result, lifetime, 1) + bytes(12)
            mapped = bytes(10) + b"\xff\xff" + public.packed
            return head + data[24:36] + struct.pack(">B3xHH", 6, port, port) + mapped
        if data[:2] == b"\x00\x00":
            return struct.pack(">BBHI", 0, 128, 0, 1) + public.packed
        if data[:2] == b"\x00\x02" and len(data) == 12:
            port = struct.unpack(">H", data[4:6])[0]
            lifetime = struct.unpack(">I", data[8:12])[0]
            if not lifetime:
                return struct.pack(">BBHIHHI", 0, 130, 0, 1, port, 0, 0)
            grant(port)
            return struct.pack(">BBHIHHI", 0, 130, 0, 1, port, port, lifetime)
        return None

    return router_responder(home, stop, answer, "the port mapping responder")


# Deletes every conntrack entry of the namespace it runs in: an IPCTNL_MSG_CT_DELETE over
# ctnetlink with no tuple is a flush (the `conntrack -F` of conntrack-tools, not installed).
_FLUSH_CONNTRACK = """
import socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
body = struct.pack("BBH", socket.AF_INET, 0, 0)
s.send(struct.pack("=IHHII", 16 + len(body), (1 << 8) | 2, 1 | 4, 1, 0) + body)
reply = s.recv(4096)
err = struct.unpack("=i", reply[16:20])[0]
raise SystemExit(-err)
"""


def renumber(lab: Lab, home: Home, new_ip: str) -> None:
    """`home`'s router restarts with a new public IPv4 address, as a home router does: the
    old address is gone (no neighbour on the shared segment still sends to it), the port
    mappings it granted are forgotten and its connection tracking (every NAT binding) is
    flushed, so every link through it dies. Its PCP responder (`portmap_responder`) grants
    the new address from then on."""
    for other in (lab.inet, *(h.router for h in lab.homes if h is not home)):
        _run("ip", "-n", other, "-4", "neigh", "flush", "all")
    _run("ip", "-n", home.router, "addr", "del", f"{home.public_ip}/24", "dev", "wan")
    _run("ip", "-n", home.router, "addr", "add", f"{new_ip}/24", "dev", "wan")
    home.wan = new_ip
    _run("ip", "netns", "exec", home.router, "nft", "flush", "chain", "ip", "nat", "in_nat")
    _run("ip", "netns", "exec", home.router, sys.executable, "-c", _FLUSH_CONNTRACK)


# -- a real router daemon: miniupnpd ---------------------------------------------------

# miniupnpd maps nothing for a router whose own address is private or reserved (the
# documentation ranges of the lab's internet among them: "Port forwarding is impossible"), so
# its router takes an address outside them. It exists only inside the lab's namespaces, whose
# internet routes nowhere else.
MINIUPNPD_WAN = "192.0.3.{}"
_MINIUPNPD_TABLE = """
table inet miniupnpd {
    chain forward {
        type filter hook forward priority -1; policy accept;
        jump miniupnpd
    }
    chain miniupnpd {
    }
    chain prerouting {
        type nat hook prerouting priority -101; policy accept;
        jump prerouting_miniupnpd
    }
    chain postrouting {
        type nat hook postrouting priority 99; policy accept;
        jump postrouting_miniupnpd
    }
    chain prerouting_miniupnpd {
    }
    chain postrouting_miniupnpd {
    }
}
"""


def miniupnpd_unavailable() -> str | None:
    """Why miniupnpd (its nftables build) cannot run here, or None."""
    if shutil.which("miniupnpd") is None:
        return "miniupnpd is not installed (apt-get install -y miniupnpd-nftables)"
    shown = subprocess.run(["miniupnpd", "--version"], capture_output=True, text=True)
    if "nftables" not in shown.stdout + shown.stderr:
        return "miniupnpd is not its nftables build (apt-get install -y miniupnpd-nftables)"
    return None


def give_public_wan(lab: Lab, home: Home, ip: str) -> None:
    """`home`'s router takes `ip` (outside the lab's internet /24) as its only public
    address; every other machine of the lab reaches it on the shared segment."""
    _run("ip", "-n", home.router, "addr", "del", f"{home.public_ip}/24", "dev", "wan")
    _run("ip", "-n", home.router, "addr", "add", f"{ip}/32", "dev", "wan")
    _run("ip", "-n", home.router, "route", "add", f"{lab.net}.0/24", "dev", "wan", "src", ip)
    for other in (lab.inet, *(h.router for h in lab.homes if h is not home)):
        dev = "br0" if other == lab.inet else "wan"
        _run("ip", "-n", other, "route", "add", f"{ip}/32", "dev", dev)
    home.wan = ip


@dataclass
class Miniupnpd:
    """miniupnpd running on a home's router: the mappings it holds and what it logged."""

    home: Home
    log_path: Path

    def mappings(self) -> list[str]:
        """Its port forwards now, one nftables rule each (`... dnat ip to 10.0.1.2:4470`)."""
        listed = subprocess.run(
            ["ip", "netns", "exec", self.home.router, "nft", "list", "chain", "inet",
             "miniupnpd", "prerouting_miniupnpd"], capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return [line.strip() for line in listed.splitlines() if "dnat" in line]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def miniupnpd(lab: Lab, home: Home, workdir: Path) -> Iterator[Miniupnpd]:
    """miniupnpd (PCP and NAT-PMP, no UPnP) on `home`'s router, as a home router runs it:
    it maps ports for its own network only, each forward a real nftables rule on the router,
    the router's address made one it calls public (`MINIUPNPD_WAN`). Listening when this
    yields; stopped on leaving (look at its mappings before that: it removes them as it
    stops)."""
    workdir.mkdir(parents=True, exist_ok=True)
    give_public_wan(lab, home, MINIUPNPD_WAN.format(10 + home.index))
    _run("ip", "netns", "exec", home.router, "nft", "-f", "-", stdin=_MINIUPNPD_TABLE)
    conf = workdir / "miniupnpd.conf"
    conf.write_text(
        "ext_ifname=wan\nlistening_ip=lan\nenable_natpmp=yes\nenable_upnp=no\n"
        "secure_mode=yes\nupnp_table_name=miniupnpd\nupnp_nat_table_name=miniupnpd\n"
        f"lease_file={workdir / 'leases'}\n"
        f"allow 1024-65535 10.0.{home.index}.0/24 1024-65535\n"
        "deny 0-65535 0.0.0.0/0 0-65535\n"
    )
    log_path = workdir / "miniupnpd.log"
    command = ["ip", "netns", "exec", home.router, "miniupnpd", "-d", "-f", str(conf),
               "-P", str(workdir / "miniupnpd.pid")]  # fmt: skip
    with daemon(command, log_path, lambda: b"Listening for NAT-PMP/PCP" in log_path.read_bytes(),
                "miniupnpd"):  # fmt: skip
        yield Miniupnpd(home, log_path)


@contextmanager
def daemon(command: list[str], log_path: Path, ready: Callable[[], bool], what: str
           ) -> Iterator[None]:  # fmt: skip
    """`command` running, its output in `log_path`, from the moment `ready()` holds (within
    30 s, else RuntimeError naming `what` with the end of its log) until the block ends."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                text = log_path.read_text(errors="replace")[-800:]
                raise RuntimeError(f"{what} did not start: {text}")
            time.sleep(0.05)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def router_responder(
    home: Home, stop: threading.Event, answer: Callable[[bytes], bytes | None], what: str
) -> InNamespace:
    """A UDP server on `home`'s router at the PCP/NAT-PMP port (5351), answering each request
    with `answer(request)` (nothing where that is None) until `stop`; listening when this
    returns, else TimeoutError naming `what`."""
    import socket

    ready = threading.Event()

    async def serve() -> None:
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        await sock.bind((f"10.0.{home.index}.1", 5351))
        ready.set()
        async with trio.open_nursery() as nursery:

            async def loop() -> None:
                while True:
                    data, source = await sock.recvfrom(1100)
                    reply = answer(bytes(data))
                    if reply is not None:
                        await sock.sendto(reply, source)

            nursery.start_soon(loop)
            await wait_event(stop)
            nursery.cancel_scope.cancel()

    running = run_in(home.router, serve)
    if not ready.wait(20):
        running.join(1)
        raise TimeoutError(f"{what} did not start")
    return running


def stun_responder(lab: Lab, stop: threading.Event) -> InNamespace:
    """The lab's STUN responders (both addresses), listening when this returns."""
    from buraco_p2p.net.reach.stun import serve_binding

    ready = threading.Event()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            for listener in await trio.open_tcp_listeners(STUN_PORT, host="0.0.0.0"):
                nursery.start_soon(serve_binding, listener)
            ready.set()
            await wait_event(stop)
            nursery.cancel_scope.cancel()

    running = run_in(lab.inet, serve)
    if not ready.wait(20):
        running.join(1)
        raise TimeoutError("the STUN responder did not start")
    return running


@contextmanager
def stun_lab(net: str = "198.51.100") -> Iterator[Lab]:
    """A fresh `Lab` (its internet the /24 `net`) with its STUN responders listening, both
    stopped on leaving."""
    with Lab(net=net) as made:
        stop = threading.Event()
        stun = stun_responder(made, stop)
        try:
            yield made
        finally:
            stop.set()
            stun.join(10)


async def host_then_join(
    host: list[str],
    prefix: bytes,
    join: Callable[[str], list[str]],
    joined: Callable[[trio.Process, list[bytes]], Awaitable[None]],
    *,
    printed: bytes = b"\n",
) -> tuple[str, str]:
    """Run the `host` command until it prints a line starting `prefix` (its invite or short
    code) and then `printed`; run `join(that line)`, and `joined(joiner, its output)` waits on
    the joiner for what the test needs. Both are ended however that goes; returns what the
    host and the joiner printed."""
    hproc = await trio.lowlevel.open_process(host, stdin=-1, stdout=-1, env=ENV)
    hout: list[bytes] = []
    jout: list[bytes] = []
    joiner: trio.Process | None = None
    try:
        await read_until(hproc, hout, b"\n" + prefix, 60)
        await read_until(hproc, hout, printed, 10)
        code = next(line for line in b"".join(hout).decode().splitlines()
                    if line.startswith(prefix.decode()))  # fmt: skip
        joiner = await trio.lowlevel.open_process(join(code), stdin=-1, stdout=-1, env=ENV)
        await joined(joiner, jout)
    finally:
        await kill_leftovers([p for p in (hproc, joiner) if p is not None])
        assert hproc.stdout is not None
        with trio.move_on_after(5):  # what the host printed meanwhile
            while data := await hproc.stdout.receive_some(65536):
                hout.append(bytes(data))
    return b"".join(hout).decode(), b"".join(jout).decode()


def buraco_command(namespace: str, home: Path, *args: str) -> list[str]:
    """`python -m buraco_p2p ARGS --line` run inside `namespace`, its identity and tables kept
    under `home` (`home/id`, `home/data`), so two homes are two people."""
    where = ["--config-dir", str(home / "id"), "--data-dir", str(home / "data")]
    return ["ip", "netns", "exec", namespace, sys.executable, "-m", "buraco_p2p", *args,
            "--line", *where]  # fmt: skip


@dataclass
class Reach:
    """How the homes of a `mesh_table` make themselves reachable (as --stun/--turn do)."""

    host: Callable[[Any, int, Callable[[str], None]], Awaitable[None]]
    joiner: Callable[[Home, Any, int, Any, Callable[[str], None]], Awaitable[None]]
    said: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class TableOutcome:
    """What `mesh_table` saw: per ordered pair of homes (a, b), how a's link to b was made
    (`Mesh.how_linked`); the seconds from the invite to every link up (and direct where it
    could be); what each home received from whom over the mesh."""

    links: dict[tuple[int, int], str | None]
    up_s: float
    received: dict[int, list[int]]
    relayed_chunks: int
    # How often the host timed a punch for each pair of joiners' homes, once all settled.
    tries: dict[frozenset[int], int] = field(default_factory=dict)
    # With `hand_dir`: each home's log once the first hand is over (entries, SHA-256).
    hand_entries: dict[int, int] = field(default_factory=dict)
    hand_digests: dict[int, str] = field(default_factory=dict)
    # Per ordered pair: how the link was made, each change from the settling to the end.
    history: dict[tuple[int, int], list[str | None]] = field(default_factory=dict)
    # Per home: why links or attempts failed, up to the settling (`Mesh.rejections`).
    rejections: dict[int, list[str]] = field(default_factory=dict)


class _Countdown:
    """A thread-safe count that sets `event` when it reaches zero."""

    def __init__(self, count: int) -> None:
        self.count, self.lock, self.event = count, threading.Lock(), threading.Event()

    def done(self) -> None:
        with self.lock:
            self.count -= 1
            if self.count <= 0:
                self.event.set()


def mesh_table(
    homes: list[Home],
    *,
    host_port: int = 4464,
    port: int = 4470,
    direct_wait: float = 15.0,
    timeout: float = 60.0,
    hand_dir: Path | None = None,
    listen_host: str = "0.0.0.0",
    map_host: bool = True,
    reach: Reach | None = None,
    interlude: Callable[[Any], None] | None = None,
) -> TableOutcome:
    """A real table of `len(homes)` seats: the host in `homes[0]`, one joiner per other home.

    The host's router grants it a port mapping (the lab's PCP responder), which it adds to
    its invite, as `--internet` does; the joiners have no STUN server and no mapping. Every
    peer listens on every IPv4 interface of its home. Each waits until all its links are up
    and, for up to `direct_wait` seconds, none is relayed (links that cannot punch stay
    relayed); then every peer sends one message to all and reads one from each. Every peer
    listens on `listen_host` ("::": IPv6 only); with `map_host` False the host asks its router
    for no mapping (an IPv6 host's firewall is opened by the caller, `open_pinhole`). With
    `hand_dir` (where each peer keeps its table), the table then plays one hand of the
    classic rules, each seat a bot, over these links.

    With `reach`, the host takes no mapping: `reach.host` readies its addresses (STUN,
    `--turn`) and `reach.joiner` each joiner's before it dials (a reply code, a relay), as
    the commands do; a joiner that cannot reach the host tries again, and every line either
    says goes to `reach.said` (a reply code is pasted at the host as soon as it is said).

    `interlude(host_mesh)` runs (in a thread of its own) once every link has settled and
    before anyone sends: what the network does to the table meanwhile (a cut, say), which
    the table must then outlive.
    """
    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.mesh.mesh import Mesh
    from buraco_p2p.net.mesh.startup import host_table, join_table
    from buraco_p2p.net.reach.candidates import CandidateKind
    from buraco_p2p.net.reach.invite import Invite
    from buraco_p2p.net.reach.portmap import map_port

    ids = {h.index: Identity.generate(f"p{h.index}") for h in homes}
    by_key = {ident.public: i for i, ident in ids.items()}
    invite_box: list[Invite] = []
    invite_ready = threading.Event()
    settled, finished = _Countdown(len(homes)), _Countdown(len(homes))
    handed = _Countdown(len(homes))
    hand_entries: dict[int, int] = {}
    hand_digests: dict[int, str] = {}
    started: list[float] = []
    up_at: dict[int, float] = {}
    links: dict[tuple[int, int], str | None] = {}
    received: dict[int, list[int]] = {}
    chunks: list[int] = []
    tries: dict[frozenset[int], int] = {}
    history: dict[tuple[int, int], list[str | None]] = {}
    rejections: dict[int, list[str]] = {}
    lock = threading.Lock()

    async def play(me: int, mesh: Mesh) -> None:
        try:
            await play_seat(me, mesh)
        except (trio.TooSlowError, AssertionError) as exc:
            # Which links were not up, and why each last ended: the failure says it.
            links_now = {by_key[k]: mesh.how_linked(k) if mesh.is_up(k) else "down"
                         for k in mesh.peers()}  # fmt: skip
            raise AssertionError(
                f"home {me}: {type(exc).__name__} {exc}; links {links_now}; "
                f"last rejections {list(mesh.rejections)[-8:]}"
            ) from exc

    async def play_seat(me: int, mesh: Mesh) -> None:
        await mesh.wait_all_up(len(homes))
        with trio.move_on_after(direct_wait):
            while any(mesh.is_relayed(k) or not mesh.is_up(k) for k in mesh.peers()):
                await trio.sleep(0.02)
        with lock:
            up_at[me] = time.perf_counter()
            for k in mesh.peers():
                links[(me, by_key[k])] = mesh.how_linked(k)
            rejections[me] = list(mesh.rejections)
        settled.done()
        await wait_event(settled.event)
        if mesh.is_host:
            with lock:
                for pair, n in mesh.punches.tries.items():
                    tries[frozenset(by_key[k] for k in pair)] = n
            if interlude is not None:
                await trio.to_thread.run_sync(interlude, mesh)
        async with trio.open_nursery() as watching:
            watching.start_soon(watch_links, me, mesh)
            await greet_and_play(me, mesh)
            watching.cancel_scope.cancel()

    async def watch_links(me: int, mesh: Mesh) -> None:
        """How each link is made, every time that changes from the settling on ("down" while
        it is not up), until every home is done (then the homes leave, each in its own time:
        a link going down as they do is no part of the table's play)."""
        while not finished.event.is_set():
            with lock:
                for k in mesh.peers():
                    now = mesh.how_linked(k) if mesh.is_up(k) else "down"
                    seen = history.setdefault((me, by_key[k]), [])
                    if not seen or seen[-1] != now:
                        seen.append(now)
            await trio.sleep(0.05)

    async def greet_and_play(me: int, mesh: Mesh) -> None:
        await mesh.broadcast({"from": me})
        got: list[int] = []
        # A peer that has heard everyone goes on to the hand; what it sends for the match
        # (the host's terms) can reach us before the last greeting: kept for the match.
        held: list[tuple[Any, Any]] = []
        with trio.fail_after(20):
            while len(got) < len(homes) - 1:
                peer, message = await mesh.receive()
                if isinstance(message, dict) and message.get("from") == by_key[peer]:
                    got.append(by_key[peer])
                else:
                    held.append((peer, message))
        with lock:
            received[me] = sorted(got)
        if hand_dir is not None:
            with trio.fail_after(120):
                await play_hand(me, mesh, held)
        finished.done()
        await wait_event(finished.event)
        await trio.sleep(0.2)  # the last acks, so nobody reports a peer down early

    async def play_hand(me: int, mesh: Mesh, held: list[tuple[Any, Any]]) -> None:
        from buraco_p2p.bots import make_bot
        from buraco_p2p.play.botpeer import cut_after_hands
        from buraco_p2p.play.node import start_on_mesh
        from buraco_p2p.rules import get_preset

        assert hand_dir is not None
        rules = get_preset("classic").with_overrides({"players": len(homes)})
        bot = make_bot("heuristic")

        def choose(peer: Any, rng: Any) -> Any:
            return bot.choose_move(peer.table.view, rng)

        async with start_on_mesh(
            mesh, ids[me], hand_dir / f"p{me}", rules=rules if mesh.is_host else None,
            held=held, choose=choose,
        ) as driver:  # fmt: skip
            await driver.wait_until(lambda p: cut_after_hands(p, 1) is not None)
            wires = cut_after_hands(driver.peer, 1)
            with lock:
                hand_entries[me] = len(wires or [])
                hand_digests[me] = hashlib.sha256(b"".join(wires or [])).hexdigest()
            handed.done()
            await wait_event(handed.event)

    codes: list[str] = []

    def say_for(home: Home) -> Callable[[str], None]:
        def say(line: str) -> None:
            with lock:
                if reach is not None:
                    reach.said.setdefault(home.index, []).append(line)
                if line.startswith("BRR-"):
                    codes.append(line)

        return say

    async def paste_codes(mesh: Mesh, say: Callable[[str], None]) -> None:
        from buraco_p2p.net.mesh.internet import answer_reply_code

        done = 0
        async with trio.open_nursery() as nursery:
            while True:
                with lock:
                    fresh, done = codes[done:], len(codes)
                for code in fresh:
                    nursery.start_soon(answer_reply_code, mesh, host_port, code, say)
                await trio.sleep(0.02)

    def host(home: Home) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            async with host_table(
                ids[home.index], listen_host=listen_host, port=host_port, seats=len(homes)
            ) as mesh:
                if reach is not None:
                    await reach.host(mesh, host_port, say_for(home))
                    mesh.nursery.start_soon(paste_codes, mesh, say_for(home))
                elif map_host:
                    mapping = await map_port(host_port)
                    mesh.advertise_also(mapping.external, CandidateKind.MAPPED)
                invite_box.append(mesh.invite)
                started.append(time.perf_counter())
                invite_ready.set()
                try:
                    await play(home.index, mesh)
                finally:
                    chunks.append(mesh.relayed_chunks)

        return go

    def joiner(home: Home) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            from buraco_p2p.net.channel.errors import MeshError

            await wait_event(invite_ready)
            invite = invite_box[0]

            async def before(mesh: Mesh, bound: int) -> None:
                assert reach is not None
                await reach.joiner(home, mesh, bound, invite, say_for(home))

            for attempt in range(1, 6):
                seated = False
                try:
                    async with join_table(
                        ids[home.index], invite, listen_host=listen_host, port=port,
                        before_dial=before if reach is not None else None,
                    ) as mesh:  # fmt: skip
                        seated = True
                        await play(home.index, mesh)
                    return
                except MeshError:
                    if seated or reach is None or attempt == 5:
                        raise
                    await trio.sleep(1)

        return go

    stop = threading.Event()
    responder = portmap_responder(homes[0], stop) if map_host else None
    try:
        threads = [run_in(homes[0].namespace, host(homes[0]))]
        threads += [run_in(h.namespace, joiner(h)) for h in homes[1:]]
        errors: list[BaseException] = []
        for t in threads:
            try:
                t.join(timeout)
            except BaseException as exc:  # every thread is joined before one error is raised
                errors.append(exc)
        if errors:
            raise errors[0]
    finally:
        stop.set()
        if responder is not None:
            responder.join(10)
    return TableOutcome(
        links, round(max(up_at.values()) - started[0], 3), received, sum(chunks), tries,
        hand_entries, hand_digests, history, rejections,
    )


# -- a TURN server (coturn) --------------------------------------------------------------

TURN_USER, TURN_PASSWORD = "lab", "lab-secret-1"
# Not 3478: the lab's STUN responders hold that port on every address of the namespace.
TURN_PORT = 3479


def stun_turn_reach(
    lab: Lab, host_turn: list[Any], joiner_turn: dict[int, list[Any]]
) -> Reach:
    """`host --stun S1 --stun S2 [--turn ...]` and `join --stun S1 --stun S2 [--turn ...]`
    (`joiner_turn`: per home index, its TURN servers)."""
    import functools

    from buraco_p2p.net.mesh.internet import learn_public_address, prepare_reply_code
    from buraco_p2p.net.mesh.turning import keep_relay

    stun = lab.stun_servers()

    async def host(mesh: Any, port: int, say: Callable[[str], None]) -> None:
        await learn_public_address(mesh, port, stun, say, relay=bool(host_turn))
        if host_turn:
            await mesh.nursery.start(
                functools.partial(keep_relay, advertise=True), mesh, host_turn, say
            )

    async def joiner(
        home: Home, mesh: Any, port: int, invite: Any, say: Callable[[str], None]
    ) -> None:
        if joiner_turn.get(home.index):
            await mesh.nursery.start(
                functools.partial(keep_relay, advertise=False), mesh, joiner_turn[home.index],
                say,
            )  # fmt: skip
        await prepare_reply_code(mesh, port, invite, stun, say)

    return Reach(host, joiner)



@contextmanager
def lab_turn(
    lab: Lab, workdir: Path, *, ip: str | None = None, tcp_relay: bool = True
) -> Iterator[Endpoint]:
    """coturn in the lab's internet namespace at `ip`:`TURN_PORT` (an address added to its bridge;
    the lab's .4 by default), with the lab's user and password."""
    ip = ip or f"{lab.net}.4"
    listed = subprocess.run(["ip", "-n", lab.inet, "-4", "addr", "show", "dev", "br0"],
                            capture_output=True, text=True).stdout  # fmt: skip
    if f"inet {ip}/" not in listed:
        _run("ip", "-n", lab.inet, "addr", "add", f"{ip}/24", "dev", "br0")
    with coturn(ip, TURN_PORT, workdir, namespace=lab.inet, tcp_relay=tcp_relay) as endpoint:
        yield endpoint


def turn_unavailable() -> str | None:
    """Why coturn cannot run here, or None."""
    if shutil.which("turnserver") is None:
        return "coturn's `turnserver` is not installed (apt-get install -y coturn)"
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on at `host` right now (for a server started next)."""
    import socket

    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _listening(namespace: str | None, ip: str, port: int) -> bool:
    """Whether something listens on TCP `ip`:`port` (inside `namespace`)."""
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    done = subprocess.run([*prefix, "ss", "-Hltn", f"src {ip}:{port}"], capture_output=True,
                          text=True)  # fmt: skip
    return bool(done.stdout.strip())


@contextmanager
def coturn(
    ip: str, port: int, workdir: Path, *, namespace: str | None = None, tcp_relay: bool = True,
    user: str = TURN_USER, password: str = TURN_PASSWORD,
) -> Iterator[Endpoint]:
    """coturn on `ip`:`port` (TCP and UDP, no TLS, no CLI, no config file), long-term
    credentials for `user`:`password`, relaying from `ip`; in `namespace` if given. Yields
    its endpoint once it listens; stopped on leaving."""
    workdir.mkdir(parents=True, exist_ok=True)
    cmd = [
        "turnserver", "-n", "--no-cli", "--no-tls", "--no-dtls",
        "--listening-ip", ip, "--listening-port", str(port), "--relay-ip", ip,
        "--lt-cred-mech", "--user", f"{user}:{password}", "--realm", "buraco-lab",
        "--userdb", str(workdir / "turndb"), "--pidfile", str(workdir / "turn.pid"),
        "--log-file", "stdout", "--simple-log",
    ]  # fmt: skip
    if ipaddress.ip_address(ip).is_loopback:
        cmd.append("--allow-loopback-peers")
    if not tcp_relay:
        cmd.append("--no-tcp-relay")
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    with daemon([*prefix, *cmd], workdir / "turn.log",
                lambda: _listening(namespace, ip, port), f"coturn on {ip}:{port}"):  # fmt: skip
        yield Endpoint.parse(ip, port)
