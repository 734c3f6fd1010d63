#!/usr/bin/env python3
"""CloudNotes benchmark: drives the real `cloudnotes serve` through pipes, as an editor would.

For each number of memos (1,000, 10,000 and 100,000 by default) it generates a fixed-seed data set and
measures its import; then it measures start-up, select, list, search, typing (one round trip at a time
and pipelined) and peak RSS, each on a fresh server process, each scenario for every size in turn
(start-ups alternating between sizes), so that a machine that changes speed during the run moves every
size alike. Baselines are measured in the same run, with the same driver, just before or after the
scenario they are compared with: a JSON line echoed through `cat` (the pipe's floor), the same searches
run directly on the same SQLite file, and the raw cost of inserting the same rows into SQLite.

It prints one table per size, writes every figure to bench/results/latest.json and draws
bench/results/latency.png. It is a benchmark, not a test: it never fails because of a timing. It exits
non-zero only when something breaks (an error response, a crash, a hang, a wrong search count).

Standard library only, plus matplotlib for the plot (skipped with a warning when it is missing).
See bench/README.md.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import fcntl
import json
import math
import os
import platform
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import uuid

perf_ns = time.perf_counter_ns

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)

# The server writes the members in declaration order: notifications start with the first prefix, responses
# with one of the others. A line in another order takes the slow path (parsed), so that must stay rare.
NOTIFICATION_PREFIX = b'{"jsonrpc":"2.0","method"'
RESPONSE_PREFIXES = (b'{"jsonrpc":"2.0","id":', b'{"id":', b'{"error":')


def is_response(line: bytes) -> bool:
    """Whether a line the server wrote is a response: by its first bytes, else (keys in another order) parsed."""
    return line.startswith(RESPONSE_PREFIXES) or (not line.startswith(NOTIFICATION_PREFIX) and "id" in json.loads(line))


# The line of the pipe floor: a small response, echoed through `cat`.
SMALL_LINE = b'{"id":12345,"jsonrpc":"2.0","result":{"memo":{"id":"0b1e4f5a-8c7d-4e2f-9a3b-6c5d4e3f2a1b","version":7}}}\n'
# The `initialize` request of a timed start-up (see `timed_start`).
INITIALIZE_LINE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"cloudnotes-bench"},'
                   b'"locale":"en-US","timeZone":"UTC"}}\n')


class BenchError(Exception):
    """Something broke: an error response, a crash, a hang, a wrong answer. Aborts the run."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Data: realistic Korean + English memos, fixed seed
# ---------------------------------------------------------------------------------------------------

KO_NOUNS = """회의 회의록 프로젝트 일정 마감 보고서 예산 검토 팀장님 고객 미팅 장보기 우유 계란 사과 커피 점심 저녁
약속 병원 운동 독서 영화 여행 준비 비행기 호텔 예약 카페 친구 가족 생일 선물 아이디어 메모 할일 내일 오늘 주말
월요일 화요일 수요일 목요일 금요일 서울 부산 제주도 디자인 개발 서버 데이터베이스 배포 테스트 버그 수정 기능 요청
문서 정리 공부 영어 단어 책 강의 발표 자료 슬라이드 피드백 계약 견적 결제 송금 세금 보험 청소 빨래 요리 레시피
김치찌개 된장국 비빔밥 라면 날씨 산책 자전거 지하철 버스 택시 주차 이사 집 가구 냉장고 세탁기 노트북 휴대폰
충전기 계정 이메일 전화 문자 연락 답장 확인 계획 목표 습관 건강 다이어트 수면 스트레칭 아이들 학교 숙제 학원
도서관 은행 우체국 택배 주문 환불 영수증 가계부 월급 적금 대출 이자 부모님 동생 조카 강아지 고양이 사료 화분
물주기 사진 앨범 음악 노래 기타 피아노 그림 일기 감사 반성 다짐 출장 휴가 연차 야근 면접 이력서 포트폴리오""".split()
KO_PARTICLES = ["", "", "", "을", "를", "이", "가", "은", "는", "에", "에서", "으로", "와", "과", "도", "의", "까지"]
KO_ENDINGS = """해야 함|하기|확인하기|준비하기|예약하기|보내기|사기|읽기|정리하기|했다|했어요|하자|할 것|필요함|완료|진행 중|
보류|좋았다|힘들었다|재미있었다|잊지 말기|다시 보기|물어보기|알아보기|끝냄|미룸|챙기기|연락하기|검토 요청|공유하기""".replace(
    "\n", "").split("|")
EN_WORDS = """meeting notes project deadline budget review client team schedule update report design release
server database deploy test bug fix feature request document plan goal idea draft slides feedback contract
invoice payment travel flight hotel booking coffee lunch dinner grocery milk eggs bread apples book chapter
lecture homework weekend Monday Tuesday Wednesday Thursday Friday morning afternoon evening tomorrow today
call email reply follow check prepare send buy read write finish start cancel move share sync backup
password account laptop phone charger kitchen recipe garden walk bike subway taxi parking doctor dentist
gym yoga sleep health habit journal photo music guitar piano movie birthday gift family friends kids school
quarterly roadmap milestone sprint retro standup onboarding hiring interview resume portfolio API endpoint
latency cache index query migration refactor cleanup release-notes changelog""".split()
EN_SMALL = "the a to and of for with on in at about before after from".split()
NAMES = ["Minji", "Jisoo", "Hyunwoo", "Seoyeon", "Alex", "Sam", "Jordan", "Taylor", "Chris", "Dana", "김 대리",
         "박 과장", "이 팀장", "최 선생님", "엄마", "아빠"]
DAYS_KO = ["월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"]
UNITS_KO = ["개", "통", "판", "권", "명", "시", "분", "번", "원", "장"]
TITLE_TEMPLATES = [
    "{ko} {ko}", "{ko}{p} {end}", "{en} notes", "{En} {en}", "{ko} - {en}", "{date} 회의록", "{date} {ko}",
    "TODO {day}", "{ko} 목록", "Reading list", "{ko} 아이디어", "{En} plan for {ko}", "{name}와 {ko}",
    "주간 {ko} 정리", "{En} checklist", "{ko} {en} 메모",
]
TYPING_1KB_TITLE = "Typing test 1KB 타이핑 테스트"
TYPING_100KB_TITLE = "Typing test 100KB 타이핑 테스트"
TYPED_CHARS = "hello 안녕하세요 world 메모를 쓰는 중 typing test 입니다 "


class TextGen:
    """Sentences, lines and memos of mixed Korean and English, from one seeded random generator."""

    def __init__(self, rng: random.Random, rare_term: str):
        self.rng = rng
        self.rare_term = rare_term
        self.pool = [self._line() for _ in range(40_000)]  # pooled lines keep 160 MB of text quick to build

    def _date(self) -> str:
        r = self.rng
        return f"{r.randint(2020, 2025)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"

    def _ko_sentence(self) -> str:
        r = self.rng
        words = []
        for _ in range(r.randint(2, 7)):
            if r.random() < 0.12:
                words.append(r.choice(EN_WORDS))
            elif r.random() < 0.1:
                words.append(f"{r.randint(1, 30)}{r.choice(UNITS_KO)}")
            else:
                words.append(r.choice(KO_NOUNS) + r.choice(KO_PARTICLES))
        words.append(r.choice(KO_ENDINGS))
        return " ".join(words) + r.choice([".", "", "!", ".", "?"])

    def _en_sentence(self) -> str:
        r = self.rng
        words = []
        for i in range(r.randint(4, 12)):
            if i and r.random() < 0.35:
                words.append(r.choice(EN_SMALL))
            elif r.random() < 0.08:
                words.append(r.choice(KO_NOUNS))
            else:
                words.append(r.choice(EN_WORDS))
        words[0] = words[0][:1].upper() + words[0][1:]
        return " ".join(words) + r.choice([".", ".", "!", "?", ""])

    def _line(self) -> str:
        r = self.rng
        kind = r.random()
        if kind < 0.30:
            return self._ko_sentence() + (" " + self._ko_sentence() if r.random() < 0.4 else "")
        if kind < 0.52:
            return self._en_sentence() + (" " + self._en_sentence() if r.random() < 0.3 else "")
        if kind < 0.64:
            return self._ko_sentence() + " " + self._en_sentence()
        if kind < 0.80:
            return "- " + r.choice([self._ko_sentence, self._en_sentence])()
        if kind < 0.87:
            return f"[{r.choice(' x')}] " + r.choice([self._ko_sentence, self._en_sentence])()
        if kind < 0.92:
            return f"{r.randint(1, 9)}. {r.choice(KO_NOUNS)} {r.randint(1, 20)}{r.choice(UNITS_KO)}"
        if kind < 0.95:
            return f"{self._date()} {r.randint(8, 21)}:{r.choice(['00', '30', '15'])} {r.choice(NAMES)} {r.choice(KO_NOUNS)}"
        if kind < 0.97:
            return f"https://example.com/{r.choice(EN_WORDS).lower()}/{r.randint(100, 99999)}"
        if kind < 0.985:
            return f"₩{r.randint(1, 500) * 1000:,} {r.choice(KO_NOUNS)} {r.choice(['결제', '송금', '환불'])}"
        return ""  # a blank line between paragraphs

    def title(self) -> str:
        r = self.rng
        word = r.choice(EN_WORDS)
        t = r.choice(TITLE_TEMPLATES).format(
            ko=r.choice(KO_NOUNS), p=r.choice(KO_PARTICLES), end=r.choice(KO_ENDINGS), en=word,
            En=word[:1].upper() + word[1:], date=self._date(), day=r.choice(DAYS_KO), name=r.choice(NAMES))
        return t.strip()

    def body(self, target_bytes: int) -> str:
        lines, size, pool, r = [], 0, self.pool, self.rng
        while size < target_bytes:
            line = pool[r.randrange(len(pool))]
            lines.append(line)
            size += len(line.encode()) + 1
        return "\n".join(lines)


def generate_memos(n: int, seed: int, rare_term: str, big_fraction: float = 0.01,
                   mean_bytes: int = 600) -> tuple[list[dict], dict]:
    """N import entries: ~mean_bytes per memo, `big_fraction` of them 100 KB; two typing-test memos newest."""
    rng = random.Random(seed * 1_000_003 + n)
    gen = TextGen(rng, rare_term)
    start, span = 1_577_836_800, 5 * 365 * 86_400  # 2020-01-01 .. 2024-12-30, fixed: no wall clock
    n_big = max(1, round(n * big_fraction))
    n_rare = max(1, round(n * 0.0001))
    special = 2  # the typing memos
    regular = n - special
    kinds = ["big"] * (n_big - 1) + ["small"] * (regular - (n_big - 1))  # the 100 KB typing memo is the other big one
    rng.shuffle(kinds)
    rare_at = set(rng.sample(range(regular), n_rare))
    # lognormal sizes around mean_bytes (the body is filled to the first line boundary past the target)
    sigma = 0.6
    mu = math.log(mean_bytes * 0.92) - sigma * sigma / 2
    memos = []
    for i, kind in enumerate(kinds):
        title = gen.title()
        target = 100 * 1024 if kind == "big" else min(8000, max(30, int(rng.lognormvariate(mu, sigma))))
        body = gen.body(target - len(title.encode()) - 1)
        if i in rare_at:
            lines = body.split("\n")
            lines.insert(rng.randrange(len(lines) + 1), f"조카 선물로 {rare_term} 사기 (toy {rare_term})")
            body = "\n".join(lines)
        memos.append({"title": title, "body": body, "last_modified": start + rng.randrange(span)})
    # the typing memos: newest, so both are on the first page
    body_1k = gen.body(1024 - len(TYPING_1KB_TITLE.encode()) - 1)
    body_100k = gen.body(100 * 1024 - len(TYPING_100KB_TITLE.encode()) - 1)
    memos.append({"title": TYPING_100KB_TITLE, "body": body_100k, "last_modified": start + span + 3600})
    memos.append({"title": TYPING_1KB_TITLE, "body": body_1k, "last_modified": start + span + 7200})
    sizes = [len(m["title"].encode()) + 1 + len(m["body"].encode()) for m in memos]
    small = [s for s, k in zip(sizes, kinds) if k == "small"]
    info = {
        "memos": n, "seed": seed, "big_memos": n_big, "rare_term_memos": n_rare,
        "total_bytes": sum(sizes), "mean_bytes": round(sum(sizes) / n),
        "mean_bytes_without_100kb": round(sum(small) / max(1, len(small))),
        "typing_1kb_bytes": sizes[-1], "typing_100kb_bytes": sizes[-2],
    }
    return memos, info


def memo_text(entry: dict) -> str:
    return entry["title"] + "\n" + entry["body"] if entry["body"] else entry["title"]


def memo_preview(body: str) -> str:
    words = " ".join(body.split())
    return words[:100] + "…" if len(words) > 100 else words


# ---------------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------------

# The server raises both its pipes to 256 KB (Sources/CloudNotesTransport/PipeCapacity.swift); `cat` gets
# the same, so that the pipe's floor is measured through pipes like the server's.
SERVER_PIPE_BYTES = 1 << 18
F_SETPIPE_SZ = 1031


def enlarge_pipes(proc: subprocess.Popen, size: int) -> None:
    for pipe in (proc.stdin, proc.stdout):
        try:
            fcntl.fcntl(pipe.fileno(), F_SETPIPE_SZ, size)
        except OSError:
            pass  # above /proc/sys/fs/pipe-max-size: the server is refused the same


class Driver:
    """One process on pipes: one line per request, read lines until the matching response.

    Lean on purpose, so that its own cost is small and the same for the server and for `cat`: request
    lines are bytes built before the clock starts; the timed loop only writes, reads lines and checks
    their first bytes; parsing and checking happen after the clock stops.
    """

    def __init__(self, argv: list[str], log_path: str | None = None, timeout: float = 900.0, label: str = "",
                 pipe_bytes: int | None = None, preexec_fn=None):
        self.label = label or os.path.basename(argv[0])
        self.log_path = log_path
        self._log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        self.t_spawn = perf_ns()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                     bufsize=1 << 16, preexec_fn=preexec_fn)
        if pipe_bytes:
            enlarge_pipes(self.proc, pipe_bytes)
        self.fd = self.proc.stdin.fileno()
        self.readline = self.proc.stdout.readline
        self.next_id = 1
        self.killed_by_watchdog = False
        self._watchdog = threading.Timer(timeout, self._kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    # -- plumbing

    def _kill(self) -> None:
        self.killed_by_watchdog = True
        try:
            self.proc.kill()
        except OSError:
            pass

    def write(self, data: bytes) -> None:
        try:
            n = os.write(self.fd, data)
            if n != len(data):
                view = memoryview(data)[n:]
                while view:
                    view = view[os.write(self.fd, view):]
        except BrokenPipeError:
            raise self.died("writing") from None

    def died(self, doing: str) -> BenchError:
        if self.killed_by_watchdog:
            return BenchError(f"{self.label}: hung while {doing}; killed after the timeout{self.stderr_tail()}")
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = "still running"
        return BenchError(f"{self.label}: the process closed its output while {doing} (exit code {code})"
                          f"{self.stderr_tail()}")

    def stderr_tail(self) -> str:
        if not self.log_path:
            return ""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - 2000))
                tail = f.read().decode(errors="replace").strip()
        except OSError:
            return ""
        return f"\n--- last lines of {self.log_path} ---\n{tail}" if tail else ""

    def request(self, method: str, params: dict | None = None) -> tuple[int, bytes]:
        """A request line (bytes) and its id."""
        rid = self.next_id
        self.next_id += 1
        line = b'{"jsonrpc":"2.0","id":%d,"method":"%s"' % (rid, method.encode())
        if params is not None:
            line += b',"params":' + json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()
        return rid, line + b"}\n"

    def notify(self, method: str, params: dict | None = None) -> None:
        line = b'{"jsonrpc":"2.0","method":"%s"' % method.encode()
        if params is not None:
            line += b',"params":' + json.dumps(params, separators=(",", ":")).encode()
        self.write(line + b"}\n")

    # -- the timed part

    def round_trip(self, line: bytes) -> tuple[int, bytes, list[bytes]]:
        """Writes one request line and reads up to its response: (elapsed ns, response, notifications)."""
        readline, notifications = self.readline, []
        t0 = perf_ns()
        self.write(line)
        while True:
            got = readline()
            if got.startswith(NOTIFICATION_PREFIX):
                notifications.append(got)
                continue
            if got.startswith(RESPONSE_PREFIXES):
                return perf_ns() - t0, got, notifications
            if not got:
                raise self.died("waiting for a response")
            if "id" in json.loads(got):  # keys in another order: slow path
                return perf_ns() - t0, got, notifications
            notifications.append(got)

    def echo_trip(self, line: bytes) -> int:
        """For `cat`: writes a line and reads one line back (the pipe's floor)."""
        t0 = perf_ns()
        self.write(line)
        got = self.readline()
        elapsed = perf_ns() - t0
        if len(got) != len(line):
            raise self.died("echoing")
        return elapsed

    # -- checks, after the clock

    def check(self, rid: int, response: bytes, method: str):
        try:
            message = json.loads(response)
        except ValueError:
            raise BenchError(f"{method} (id {rid}): the server wrote a line that is not JSON: {response[:300]!r}")
        if message.get("id") != rid:
            raise BenchError(f"{method}: expected the response to id {rid}, got {response[:300]!r}")
        if "error" in message:
            raise BenchError(f"{method} (id {rid}) failed: {json.dumps(message['error'], ensure_ascii=False)[:1000]}")
        if "result" not in message:
            raise BenchError(f"{method} (id {rid}): a response without result: {response[:300]!r}")
        return message["result"]

    def call(self, method: str, params: dict | None = None):
        """One checked request, untimed: (result, parsed notifications)."""
        rid, line = self.request(method, params)
        _, response, notifications = self.round_trip(line)
        return self.check(rid, response, method), [json.loads(n) for n in notifications]

    def read_until_notification(self, method: str) -> tuple[int, list[bytes]]:
        """Reads lines until a notification `method` (ns since spawn, lines read)."""
        marker = b'"method":"%s"' % method.encode()
        seen = []
        while True:
            got = self.readline()
            if not got:
                raise self.died(f"waiting for {method}")
            seen.append(got)
            if marker in got:
                return perf_ns() - self.t_spawn, seen
            if is_response(got):
                raise BenchError(f"{self.label}: unexpected response while waiting for {method}: {got[:300]!r}")
            if b'"method":"detail/didClear"' in got and method == "detail/didShow":
                raise BenchError(f"{self.label}: detail/didClear after initialized: the store looks empty")

    def vm_kb(self) -> dict:
        """VmHWM (peak RSS), VmRSS and its parts (RssAnon: the process's own memory; RssFile: mapped file
        pages, mostly the binary's code) of the process, in kB."""
        out = {}
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for row in f:
                    if row.startswith(("VmHWM:", "VmRSS:", "RssAnon:", "RssFile:")):
                        key, value = row.split(":", 1)
                        out[key] = int(value.split()[0])
        except OSError:
            pass
        return out

    def close_log(self) -> None:
        if self._log is not subprocess.DEVNULL:
            self._log.close()

    def close_cat(self) -> None:
        self._watchdog.cancel()
        self.proc.stdin.close()
        self.proc.stdout.read()
        self.proc.wait(timeout=30)
        self.close_log()

    def shutdown(self) -> dict:
        """Reads VmHWM, then shutdown + exit; the process must end with code 0. Returns the memory figures."""
        memory = self.vm_kb()
        self.call("shutdown")
        self.notify("exit")
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._kill()
            raise BenchError(f"{self.label}: did not exit after shutdown + exit{self.stderr_tail()}")
        self._watchdog.cancel()
        self.close_log()
        if rest.strip():
            raise BenchError(f"{self.label}: wrote after the shutdown response: {rest[:300]!r}")
        if code != 0:
            raise BenchError(f"{self.label}: exit code {code} after shutdown + exit{self.stderr_tail()}")
        return memory


# ---------------------------------------------------------------------------------------------------
# Statistics and formatting
# ---------------------------------------------------------------------------------------------------

def timed_start(d: Driver) -> tuple[int, int]:
    """A just-spawned server's start-up, in ns from the spawn: to the `initialize` response, and to the
    first `detail/didShow` after `initialized`. The server keeps running."""
    d.write(INITIALIZE_LINE)  # before the server is ready for it, as an editor does
    _, response, _ = d.round_trip(b"")  # reads up to the initialize response
    t_init = perf_ns() - d.t_spawn
    d.check(1, response, "initialize")
    d.next_id = 2
    d.notify("initialized")
    t_show, _ = d.read_until_notification("detail/didShow")
    return t_init, t_show


def summarize(samples: list[int]) -> dict:
    s = sorted(samples)
    n = len(s)

    def rank(p: float) -> int:
        return s[min(n - 1, max(0, math.ceil(p * n) - 1))]

    return {"n": n, "p50_ns": rank(0.50), "p90_ns": rank(0.90), "p99_ns": rank(0.99), "max_ns": s[-1],
            "min_ns": s[0], "mean_ns": round(sum(s) / n)}


def fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns < 100_000:
        return f"{ns / 1000:.1f} µs"
    if ns < 1_000_000:
        return f"{ns / 1000:.0f} µs"
    if ns < 100_000_000:
        return f"{ns / 1e6:.2f} ms"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.0f} ms"
    return f"{ns / 1e9:.2f} s"


MS = 1_000_000
DECOY_TERM = "zqxvkj"  # searched between timed searches; the generated text never holds it
SEARCH_KEYS = ("rare", "common", "ko2", "en2")  # the searches timed: --rare-term, --common-term, --short-term, --short-ascii-term
MIN_TIMED_OPS = 50  # a scenario stopped by --budget still has at least this many timed ops
PIPELINED_ROUNDS = 5  # pipelined runs per size, in turns across sizes; the figure is their median


# ---------------------------------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------------------------------

class SizeRun:
    """One number of memos through the run: its data and store, and its figures so far."""

    def __init__(self, n: int):
        self.n = n
        self.out: dict = {"scenarios": {}, "baselines": {}, "rss_kb": {}}
        self.sc, self.bl, self.rss = self.out["scenarios"], self.out["baselines"], self.out["rss_kb"]
        self.memos: list[dict] = []
        self.info: dict = {}
        self.store = ""
        self.ids: list[str] = []
        self.id_1kb = self.id_100kb = ""
        self.pipelined_start_text = ""  # the 1 KB memo's text as the first pipelined round found it
        # The pipe floor measured before the server's runs, to pool with the one measured after them.
        self.floor_samples: list[int] = []


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.work = args.work_dir
        self.results: dict = {}
        self.problems: list[str] = []
        self.server_info: dict = {}

    # -- processes

    def server(self, store: str, label: str) -> Driver:
        log_path = os.path.join(self.work, "server.log")
        with open(log_path, "ab") as f:
            f.write(f"=== {label} ===\n".encode())
        return Driver([self.bin, "serve", "--store", store], log_path=log_path, timeout=self.args.timeout,
                      label=f"cloudnotes ({label})")

    def start_server(self, store: str, label: str, expect_show: bool = True) -> Driver:
        d = self.server(store, label)
        result, _ = d.call("initialize", {"clientInfo": {"name": "cloudnotes-bench", "version": "1"},
                                          "locale": "en-US", "timeZone": "UTC"})
        self.server_info = result.get("serverInfo", {})
        d.notify("initialized")
        d.read_until_notification("detail/didShow" if expect_show else "detail/didClear")
        return d

    # -- scenario helpers

    def timed_calls(self, d: Driver, method: str, params_for, count: int, check=None) -> list[int]:
        """`count` round trips of `method`; params_for(i) gives the params. Checks every response."""
        samples, started = [], perf_ns()
        for i in range(count):
            if self.over_budget(started, i):
                break
            params = params_for(i)
            rid, line = d.request(method, params)
            elapsed, response, _ = d.round_trip(line)
            result = d.check(rid, response, method)
            if check:
                check(i, result)
            samples.append(elapsed)
        return samples

    def ops_total(self) -> int:
        return self.args.warmup + self.args.ops

    def over_budget(self, started_ns: int, done: int) -> bool:
        """True when a scenario has run past --budget seconds and already has MIN_TIMED_OPS timed ops."""
        return (self.args.budget > 0 and done >= self.args.warmup + MIN_TIMED_OPS
                and perf_ns() - started_ns > self.args.budget * 1e9)

    # -- baselines

    def baseline_pipe(self, line: bytes, label: str) -> tuple[dict, list[int]]:
        d = Driver(["cat"], timeout=self.args.timeout, label=f"cat ({label})", pipe_bytes=SERVER_PIPE_BYTES)
        samples = [d.echo_trip(line) for _ in range(self.ops_total())][self.args.warmup:]
        d.close_cat()
        return summarize(samples) | {"bytes": len(line)}, samples

    def baseline_cat_start(self, runs: int) -> dict:
        line = b'{"id":1,"jsonrpc":"2.0","result":{"protocolVersion":"1.0"}}\n'
        samples = []
        for _ in range(runs + 2):
            d = Driver(["cat"], timeout=self.args.timeout, label="cat (start)", pipe_bytes=SERVER_PIPE_BYTES)
            d.write(line)
            got = d.readline()
            elapsed = perf_ns() - d.t_spawn
            if got != line:
                raise BenchError("cat did not echo the line")
            d.close_cat()
            samples.append(elapsed)
        return summarize(samples[2:])

    def baseline_cat_pipelined(self, lines: list[bytes], updates: int | None = None) -> dict:
        """`lines` written through `cat` and read back as the server's are, the fastest of three runs (the
        first pays for the driver's fresh memory): per second of `updates` (default: one per line)."""
        runs = []
        for _ in range(3):
            d = Driver(["cat"], timeout=self.args.timeout, label="cat (pipelined)", pipe_bytes=SERVER_PIPE_BYTES)
            runs.append(pipelined(d, lines, count_every_line=True)[0])
            d.close_cat()
        elapsed = min(runs)
        updates = updates or len(lines)
        return {"n": updates, "lines": len(lines), "bytes": sum(map(len, lines)), "elapsed_ns": elapsed,
                "per_second": updates / (elapsed / 1e9)}

    # -- the run

    def run(self) -> int:
        args = self.args
        os.makedirs(self.work, exist_ok=True)
        meta = self.meta()
        self.results = {"meta": meta, "sizes": {}}
        log(f"binary: {self.bin}\nwork dir: {self.work}\n"
            f"SQLite: python sqlite3 {meta['sqlite_python']}, server {meta['sqlite_server']}")
        schema = self.store_schema()
        # Every size is prepared first (data, import, indexing). Then each scenario runs for every size
        # in turn, and the start-ups alternate between sizes: a machine that gets slower or faster during
        # the run (this one's pipe floor has moved tenfold within an hour) then moves every size alike,
        # and the curves against the number of memos compare like with like.
        runs = []
        for n in args.sizes:
            log(f"\n=== {n:,} memos: data, import, indexing ===")
            run = SizeRun(n)
            self.prepare(run, schema)
            self.results["sizes"][str(n)] = run.out
            runs.append(run)
            self.write_results()
        self.startup(runs)
        for scenario in (self.select, self.lists, self.searches, self.typing_scenarios):
            for run in runs:
                log(f"\n=== {run.n:,} memos ===")
                scenario(run)
            self.write_results()
        self.throughput_rounds(runs)
        self.write_results()
        tables = []
        for run in runs:
            log(f"\n=== {run.n:,} memos: baselines after the server's runs ===")
            self.finish(run, schema)
            self.write_results()
            table = self.table(run.n, run.out)
            tables.append(table)
            print(table, flush=True)
        summary = self.scaling_table()
        print(summary, flush=True)
        tables.append(summary)
        self.write_results()
        with open(os.path.join(args.results_dir, "latest.txt"), "w") as f:
            f.write(self.header_text() + "\n\n" + "\n\n".join(tables) + "\n")
        try:
            self.plot()
        except Exception as e:  # the figures are written already; say so, and fail the run
            self.problems.append(f"the plot failed: {e!r}")
        if self.problems:
            print("\nPROBLEMS:\n" + "\n".join(f"- {p}" for p in self.problems), flush=True)
            return 1
        return 0

    def prepare(self, run: SizeRun, schema: list[str]) -> None:
        """The data, the import's baseline (the raw insert), the import into an empty store (the store
        every later scenario uses) and the ids of its memos."""
        args, n, sc, rss = self.args, run.n, run.sc, run.rss
        # data
        data_path = os.path.join(self.work, f"memos-{n}-seed{args.seed}.json")
        t = time.monotonic()
        memos, info = generate_memos(n, args.seed, args.rare_term)
        if not os.path.exists(data_path):
            with open(data_path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(memos, f, ensure_ascii=False, separators=(",", ":"))
            os.replace(data_path + ".tmp", data_path)
        info["file_bytes"] = os.path.getsize(data_path)
        run.out["data"] = info
        log(f"data: {n:,} memos, {info['total_bytes'] / 1e6:.1f} MB of text, mean {info['mean_bytes']} B "
            f"({info['mean_bytes_without_100kb']} B without the {info['big_memos']} of 100 KB), "
            f"{time.monotonic() - t:.1f} s")

        # The import's baseline, the same rows inserted into the same schema by SQLite alone, just before
        # the import: this machine's speed moves twofold within minutes, and the ratio must compare the
        # same minutes (at the run's end, a raw insert of 8.33 s once met an import of 2.62 s).
        log("baseline: raw SQLite insert of the same rows (no full-text index, as the server's import)")
        run.bl["raw_insert"] = raw_insert_baseline(os.path.join(self.work, f"raw-{n}.sqlite"), schema, memos, args.seed,
                                                   mode="plain")
        log(f"  {fmt_ns(run.bl['raw_insert']['elapsed_ns'])}")

        # import into an empty store (this is also the store every later scenario uses)
        store = os.path.join(self.work, f"store-{n}.sqlite")
        remove_store(store)
        log("import")
        d = self.start_server(store, f"{n} import", expect_show=False)
        rid, line = d.request("memo/import", {"path": data_path})
        written_before = written_bytes(d.proc.pid)
        elapsed, response, _ = d.round_trip(line)
        written_imported = written_bytes(d.proc.pid)
        result = d.check(rid, response, "memo/import")
        if result.get("imported") != n:
            raise BenchError(f"memo/import: imported {result.get('imported')} memos, expected {n}")
        listed, _ = d.call("memo/list", {"limit": 1})
        if listed["total"] != n:
            raise BenchError(f"after importing {n} memos, memo/list says total {listed['total']}")
        # The server indexes imported memos for full-text search in the background, while the client
        # is quiet (searches read unindexed memos' text directly meanwhile). Wait for it, idle, so
        # that the search scenarios measure the indexed store.
        log("  background indexing (server idle)")
        t_index = perf_ns()
        while unindexed_count(store) > 0:
            if perf_ns() - t_index > args.timeout * 1e9:
                raise BenchError("background indexing did not finish")
            time.sleep(0.2)
        index_elapsed = perf_ns() - t_index
        written_indexed = written_bytes(d.proc.pid)
        rss["import"] = d.shutdown()
        sc["import"] = {"n": 1, "elapsed_ns": elapsed, "p50_ns": elapsed, "p99_ns": elapsed, "max_ns": elapsed,
                        "written_bytes": bytes_between(written_before, written_imported)}
        sc["background_index"] = {"n": 1, "elapsed_ns": index_elapsed, "p50_ns": index_elapsed,
                                  "p99_ns": index_elapsed, "max_ns": index_elapsed,
                                  "written_bytes": bytes_between(written_imported, written_indexed)}
        log(f"  import {fmt_ns(elapsed)}, then background indexing {fmt_ns(index_elapsed)}")

        # ids, from memo/list pages
        log("ids (memo/list pages)")
        d = self.start_server(store, f"{n} ids")
        ids, offset, total = [], 0, None
        while total is None or offset < total:
            page, _ = d.call("memo/list", {"offset": offset, "limit": 1000})
            total = page["total"]
            ids.extend(row["id"] for row in page["rows"])
            if not page["rows"]:
                break
            offset += len(page["rows"])
        first = d.call("memo/list", {})[0]["rows"]
        rss["ids"] = d.shutdown()
        if len(ids) != n or len(set(ids)) != n:
            raise BenchError(f"memo/list pages gave {len(ids)} ids ({len(set(ids))} distinct), expected {n}")
        by_title = {row["title"]: row["id"] for row in first}
        if TYPING_1KB_TITLE not in by_title or TYPING_100KB_TITLE not in by_title:
            raise BenchError("the typing-test memos are not on the first page of memo/list")
        id_1kb, id_100kb = by_title[TYPING_1KB_TITLE], by_title[TYPING_100KB_TITLE]

        run.memos, run.info, run.store, run.ids = memos, info, store, ids
        run.id_1kb, run.id_100kb = id_1kb, id_100kb

    def startup(self, runs: list[SizeRun]) -> None:
        """Process start to the initialize response and to the first detail/didShow: the starts alternate
        between the sizes, so that the figures of every size come from the same minutes. Before them,
        the pipe floor (before any server's run) and cat's own start, for every size."""
        args = self.args
        for run in runs:
            log(f"\nbaselines before the server's runs ({run.n:,} memos): pipe floor, cat start (cat)")
            run.bl["pipe_floor_before"], run.floor_samples = self.baseline_pipe(SMALL_LINE, "floor")
            run.bl["cat_start"] = self.baseline_cat_start(args.starts)
        log(f"\nstart-up ({args.starts} starts + 2 warm-up per size, alternating between sizes)")
        to_init = [[] for _ in runs]
        to_show = [[] for _ in runs]
        peak = [{} for _ in runs]
        for i in range(args.starts + 2):
            for k, run in enumerate(runs):
                d = self.server(run.store, f"{run.n} start-up {i}")
                t_init, t_show = timed_start(d)
                memory = d.shutdown()
                peak[k] = max(peak[k], memory, key=lambda m: m.get("VmHWM", 0))
                if i >= 2:
                    to_init[k].append(t_init)
                    to_show[k].append(t_show)
        for k, run in enumerate(runs):
            run.sc["startup_initialize"] = summarize(to_init[k])
            run.sc["startup_didshow"] = summarize(to_show[k])
            run.rss["startup"] = peak[k]

    def select(self, run: SizeRun) -> None:
        """memo/select of random memos."""
        args, n, sc, rss, ids = self.args, run.n, run.sc, run.rss, run.ids
        log("memo/select")
        rng = random.Random(args.seed + n)
        picks = [ids[rng.randrange(n)] for _ in range(self.ops_total())]
        d = self.start_server(run.store, f"{n} select")
        big = []

        def check_select(i, result):
            memo = result["memo"]
            if memo["id"] != picks[i]:
                raise BenchError(f"memo/select {picks[i]} answered memo {memo['id']}")
            big.append(len(memo["text"]) > 50_000)
        samples = self.timed_calls(d, "memo/select", lambda i: {"id": picks[i]}, self.ops_total(), check_select)
        rss["select"] = d.shutdown()
        samples, big = samples[args.warmup:], big[args.warmup:]
        sc["select"] = summarize(samples)
        sc["select"]["memos_of_100kb"] = sum(big)
        if any(big) and not all(big):
            sc["select"]["p50_ns_100kb_memos"] = summarize([x for x, b in zip(samples, big) if b])["p50_ns"]
            sc["select"]["p99_ns_other_memos"] = summarize([x for x, b in zip(samples, big) if not b])["p99_ns"]

    def lists(self, run: SizeRun) -> None:
        """memo/list: the first page, and a page at 90% of the list."""
        args, n, sc, rss = self.args, run.n, run.sc, run.rss
        for key, offset in (("list_first", 0), ("list_offset90", int(0.9 * n))):
            log(f"memo/list offset {offset}")
            d = self.start_server(run.store, f"{n} {key}")
            params = {} if offset == 0 else {"offset": offset}
            expected_rows = min(100, n - offset)

            def check_list(i, result, expected_rows=expected_rows):
                if result["total"] != n or len(result["rows"]) != expected_rows:
                    raise BenchError(f"memo/list: total {result['total']}, {len(result['rows'])} rows; "
                                     f"expected {n} and {expected_rows}")
            samples = self.timed_calls(d, "memo/list", lambda i: params, self.ops_total(), check_list)
            rss[key] = d.shutdown()
            sc[key] = summarize(samples[args.warmup:])
            sc[key]["offset"] = offset

    def searches(self, run: SizeRun) -> None:
        """memo/search, each followed by memo/list of the first page, and the same searches on SQLite directly."""
        args, n, sc, bl, rss, store = self.args, run.n, run.sc, run.bl, run.rss, run.store
        # Before each timed search, an untimed search for a term found nowhere: the server keeps the matches
        # of the last search (in step with every write), so a repeat of the same query would measure that
        # memory, not a search.
        # The same query straight on the SQLite file is the baseline, timed in turns with the server's, so
        # that both meet the machine's drift of the same minutes (timed apart, minutes apart, their ratio
        # moved by 1.5x with the hour): after a round of the server's, whenever SQLite's share of the time
        # so far is not ahead of the server's. A direct query far slower than the server's search (count
        # and first page of 18,600 matches) then runs every few rounds instead of eating the rounds' budget.
        terms = {"rare": args.rare_term, "common": args.common_term, "ko2": args.short_term, "en2": args.short_ascii_term}
        totals = {}
        for key, term in terms.items():
            log(f"memo/search {term!r} + memo/list (each after a search for {DECOY_TERM!r}), "
                f"in turns with the same query on SQLite directly")
            d = self.start_server(store, f"{n} search {key}")
            direct = DirectSearch(store, term)
            search_samples, list_samples, direct_samples, lookup_samples, seen_totals = [], [], [], [], set()
            decoy_rid_line = [d.request("memo/search", {"query": DECOY_TERM}) for _ in range(self.ops_total())]
            search_rid_line = [d.request("memo/search", {"query": term}) for _ in range(self.ops_total())]
            list_rid_line = [d.request("memo/list", None) for _ in range(self.ops_total())]
            started = perf_ns()
            server_ns = direct_ns = 0
            for i in range(self.ops_total()):
                if self.over_budget(started, i):
                    break
                round_started = perf_ns()
                rid, line = decoy_rid_line[i]
                _, response, _ = d.round_trip(line)
                if d.check(rid, response, "memo/search")["total"] != 0:
                    raise BenchError(f"memo/search {DECOY_TERM!r} found memos; it must find none")
                rid, line = search_rid_line[i]
                elapsed, response, _ = d.round_trip(line)
                result = d.check(rid, response, "memo/search")
                seen_totals.add(result["total"])
                search_samples.append(elapsed)
                rid, line = list_rid_line[i]
                elapsed, response, _ = d.round_trip(line)
                listed = d.check(rid, response, "memo/list")
                seen_totals.add(listed["total"])
                if len(listed["rows"]) != min(100, listed["total"]):
                    raise BenchError(f"memo/list under the filter {term!r}: {len(listed['rows'])} rows of {listed['total']}")
                list_samples.append(elapsed)
                server_ns += perf_ns() - round_started
                last_round = i == self.ops_total() - 1 or self.over_budget(started, i + 1)
                if direct.possible and (direct_ns <= server_ns or (last_round and not direct_samples)):
                    direct_started = perf_ns()
                    sample, lookup = direct.run(), direct.run_lookup() if direct.lookup_sql else None
                    direct_ns += perf_ns() - direct_started
                    if i >= args.warmup:  # the server's warm-up rounds warm SQLite's up too
                        direct_samples.append(sample)
                        if lookup is not None:
                            lookup_samples.append(lookup)
            rss[f"search_{key}"] = d.shutdown()
            direct.close()
            if len(seen_totals) != 1:
                raise BenchError(f"memo/search {term!r} gave different totals on the same store: {sorted(seen_totals)}")
            totals[key] = seen_totals.pop()
            sc[f"search_{key}"] = summarize(search_samples[args.warmup:]) | {"query": term, "matches": totals[key]}
            sc[f"search_{key}_list"] = summarize(list_samples[args.warmup:]) | {"query": term, "matches": totals[key]}
            log(f"  {totals[key]:,} matches")
            if direct.possible:
                bl[f"sqlite_search_{key}"] = summarize(direct_samples) | direct.described()
                if direct.matches != totals[key]:
                    self.problems.append(f"{n:,} memos: memo/search {term!r} says {totals[key]} matches, "
                                         f"SQLite directly says {direct.matches}")
            if lookup_samples:
                bl[f"sqlite_lookup_{key}"] = summarize(lookup_samples) | {"query": term, "sql": direct.lookup_sql}
        info = run.info
        if totals["rare"] != info["rare_term_memos"]:
            self.problems.append(f"{n:,} memos: memo/search {args.rare_term!r} found {totals['rare']} memos; "
                                 f"the data set has {info['rare_term_memos']}")

    def typing_scenarios(self, run: SizeRun) -> None:
        """Typing, one round trip at a time: the whole text (memo/update) or the keystroke (memo/edit)."""
        args, n, sc, bl, rss, id_1kb, id_100kb = self.args, run.n, run.sc, run.bl, run.rss, run.id_1kb, run.id_100kb
        # The baselines of typing, just before it: a 100 KB line through cat, a write and fsync, the 100 KB
        # row rewritten straight through SQLite.
        log("baselines of typing: 100 KB line (cat), 4 KB write + fsync, SQLite row rewrite")
        big_text = memo_text(run.memos[-2])
        big_line = (b'{"id":12345,"jsonrpc":"2.0","result":{"memo":{"text":' + json.dumps(big_text, ensure_ascii=False).encode()
                    + b'}}}\n')
        bl["pipe_100kb"], _ = self.baseline_pipe(big_line, "100 KB line")
        bl["fsync"] = fsync_baseline(self.work, self.ops_total(), args.warmup)
        bl["sqlite_rewrite_100kb"] = sqlite_rewrite_baseline(
            os.path.join(self.work, f"rewrite-{n}.sqlite"), big_text, self.ops_total(), args.warmup)
        for key, memo_id in (("update_1kb", id_1kb), ("update_100kb", id_100kb),
                             ("edit_1kb", id_1kb), ("edit_100kb", id_100kb)):
            log(f"typing ({key})")
            d = self.start_server(run.store, f"{n} {key}")
            selected, _ = d.call("memo/select", {"id": memo_id})
            text, version = selected["memo"]["text"], selected["memo"]["version"]
            typing = self.typing if key.startswith("update") else self.typing_edits
            sc[key] = summarize(typing(d, memo_id, text, version, self.ops_total())[args.warmup:])
            sc[key]["start_bytes"] = len(text.encode())
            rss[key] = d.shutdown()

    def throughput_rounds(self, runs: list[SizeRun]) -> None:
        """The pipelined updates, PIPELINED_ROUNDS times for every size, the sizes in turn (the order
        rotating): each size's figure is the median of its rounds. One run lasts about half a second,
        and this machine's speed moves that much within a minute (the same binary and store gave
        14,318 and 30,344 a second three minutes apart), so one run a size drew its curve from noise."""
        for round_index in range(PIPELINED_ROUNDS):
            shift = round_index % len(runs)
            for run in runs[shift:] + runs[:shift]:
                log(f"\n=== {run.n:,} memos, pipelined round {round_index + 1} of {PIPELINED_ROUNDS} ===")
                self.throughput(run, round_index)
        for run in runs:
            rounds = run.sc.pop("throughput_rounds")
            median = sorted(rounds, key=lambda r: r["per_second"])[len(rounds) // 2]
            run.sc["throughput"] = {**median, "rounds_per_second": [r["per_second"] for r in rounds],
                                    "rounds_start_bytes": [r["start_bytes"] for r in rounds]}

    def throughput(self, run: SizeRun, round_index: int) -> None:
        """Updates written without waiting; in the first round, the same lines and replies through cat.

        Every round starts the memo from the text the first found, with one untimed update, so that
        every round sends the same texts (only the versions' digits may differ)."""
        args, n, sc, bl, rss, id_1kb = self.args, run.n, run.sc, run.bl, run.rss, run.id_1kb
        log(f"throughput ({args.pipelined} pipelined updates)")
        d = self.start_server(run.store, f"{n} pipelined {round_index + 1}")
        selected, _ = d.call("memo/select", {"id": id_1kb})
        text, version = selected["memo"]["text"], selected["memo"]["version"]
        if round_index == 0:
            run.pipelined_start_text = text
        elif text != run.pipelined_start_text:
            text = run.pipelined_start_text
            version = d.call("memo/update", {"id": id_1kb, "text": text, "baseVersion": version})[0]["memo"]["version"]
        head = b'{"jsonrpc":"2.0","id":%d,"method":"memo/update","params":{"id":"' + memo_id_bytes(id_1kb) + b'","text":"'
        escaped = json_escape(text)
        lines, rids = [], []
        for i in range(args.pipelined):
            rid = d.next_id
            d.next_id += 1
            escaped += json_escape(TYPED_CHARS[i % len(TYPED_CHARS)])
            lines.append((head % rid) + escaped + b'","baseVersion":%d}}\n' % (version + i))
            rids.append(rid)
        final_text = text + "".join(TYPED_CHARS[i % len(TYPED_CHARS)] for i in range(args.pipelined))
        replies: list[bytes] = []
        elapsed, responses = pipelined(d, lines, received=replies)
        for i, (rid, response) in enumerate(zip(rids, responses)):
            result = d.check(rid, response, "memo/update (pipelined)")
            if result["memo"]["version"] != version + i + 1:
                raise BenchError(f"pipelined memo/update {i}: version {result['memo']['version']}, expected {version + i + 1}")
        if result["memo"]["text"] != final_text:
            raise BenchError("pipelined memo/update: the last response's text is not the text sent")
        after, _ = d.call("memo/select", {"id": id_1kb})
        if after["memo"]["text"] != final_text:
            raise BenchError("after the pipelined updates, memo/select returns another text")
        rss["pipelined" if round_index == 0 else f"pipelined, round {round_index + 1}"] = d.shutdown()
        figures = {"n": len(lines), "elapsed_ns": elapsed, "per_second": len(lines) / (elapsed / 1e9),
                   "bytes_sent": sum(map(len, lines)), "start_bytes": len(text.encode())}
        sc.setdefault("throughput_rounds", []).append(figures)
        if round_index == 0:
            bl["cat_pipelined"] = self.baseline_cat_pipelined(lines)
            # What the server wrote back (each reply carries the text and its body, beside a list
            # notification), through the same pipes and the same reader: no server can answer faster.
            bl["cat_pipelined_replies"] = self.baseline_cat_pipelined([r + b"\n" for r in replies], updates=len(lines))
        del replies
        log(f"  {figures['per_second']:,.0f} updates/s")

    def finish(self, run: SizeRun, schema: list[str]) -> None:
        """The baselines measured after the server's runs, and the peak memory over them."""
        args, n, bl, rss, out, memos = self.args, run.n, run.bl, run.rss, run.out, run.memos
        # the floor again, after the server runs: it moves with the machine's load, so both runs count
        log("baseline: pipe floor again (cat)")
        bl["pipe_floor_after"], more = self.baseline_pipe(SMALL_LINE, "floor")
        bl["pipe_floor"] = summarize(run.floor_samples + more) | {"bytes": len(SMALL_LINE)}

        log("baseline: raw SQLite insert, each row indexed by the FTS trigger")
        bl["raw_insert_fts"] = raw_insert_baseline(os.path.join(self.work, f"raw-{n}.sqlite"), schema, memos, args.seed,
                                                   mode="triggers")
        log(f"  {fmt_ns(bl['raw_insert_fts']['elapsed_ns'])}")
        if not args.no_rebuild_baseline:
            log("baseline: raw SQLite insert without the FTS trigger, then one FTS 'rebuild'")
            bl["raw_insert_rebuild"] = raw_insert_baseline(os.path.join(self.work, f"raw-{n}.sqlite"), schema, memos,
                                                           args.seed, mode="rebuild")
            log(f"  {fmt_ns(bl['raw_insert_rebuild']['elapsed_ns'])}")

        peak_key = max(rss, key=lambda k: rss[k].get("VmHWM", 0))
        out["peak_rss"] = {"kb": rss[peak_key].get("VmHWM", 0), "during": peak_key,
                           "anon_kb": rss[peak_key].get("RssAnon", 0), "file_kb": rss[peak_key].get("RssFile", 0),
                           "interactive_kb": max((v.get("VmHWM", 0) for k, v in rss.items() if k != "import"), default=0)}
        if not args.keep:
            remove_store(run.store)
        run.memos = []  # the raw inserts were the last to need them

    def meta(self) -> dict:
        def git(*cmd):
            try:
                return subprocess.run(["git", *cmd], cwd=REPO_DIR, capture_output=True, text=True,
                                      timeout=10).stdout.strip()
            except Exception:
                return ""
        return {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "binary": self.bin, "git_commit": git("rev-parse", "HEAD"),
            "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "sqlite_python": sqlite3.sqlite_version,
            "sqlite_server": server_sqlite_version(self.bin),
            "args": {k: v for k, v in vars(self.args).items() if k not in ("work_dir",)},
        }

    def header_text(self) -> str:
        m = self.results["meta"]
        a = self.args
        return (f"CloudNotes benchmark, {m['date']}, commit {m['git_commit'][:12]}{' (dirty)' if m['git_dirty'] else ''}, "
                f"server {self.server_info.get('version', '?')}\n"
                f"{m['cpus']} CPUs, {m['platform']}, Python {m['python']}; SQLite: server {m['sqlite_server']}, "
                f"python sqlite3 {m['sqlite_python']}\n"
                f"{a.ops} ops per scenario after {a.warmup} warm-up; {a.starts} starts; {a.pipelined} pipelined updates; "
                f"seed {a.seed}")

    def store_schema(self) -> list[str]:
        """The schema of a fresh server store, to reproduce it for the raw-insert baseline."""
        store = os.path.join(self.work, "schema-probe.sqlite")
        remove_store(store)
        d = self.start_server(store, "schema probe", expect_show=False)
        d.shutdown()
        con = sqlite3.connect(store)
        rows = con.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
        con.close()
        remove_store(store)
        virtual = [name for kind, name, sql in rows if sql.upper().startswith("CREATE VIRTUAL TABLE")]
        statements = []
        for kind, name, sql in rows:
            if name in ("sqlite_sequence", "grdb_migrations"):
                continue
            if kind == "table" and any(name.startswith(v + "_") for v in virtual):
                continue  # FTS shadow tables: created by CREATE VIRTUAL TABLE
            statements.append(sql)
        self.results["meta"]["store_schema"] = statements
        return statements

    def keystrokes(self, count: int):
        """The characters typed, one per timed request: `count` of them, or fewer when the time budget ends."""
        started = perf_ns()
        for i in range(count):
            if self.over_budget(started, i):
                return
            yield TYPED_CHARS[i % len(TYPED_CHARS)]

    def typing(self, d: Driver, memo_id: str, text: str, version: int, count: int) -> list[int]:
        """`count` updates, each one character longer, baseVersion from the previous response."""
        head = b'{"jsonrpc":"2.0","id":%d,"method":"memo/update","params":{"id":"' + memo_id_bytes(memo_id) + b'","text":"'
        escaped = json_escape(text)
        samples = []
        for ch in self.keystrokes(count):
            text += ch
            escaped += json_escape(ch)
            rid = d.next_id
            d.next_id += 1
            line = (head % rid) + escaped + b'","baseVersion":%d}}\n' % version
            elapsed, response, _ = d.round_trip(line)
            memo = d.check(rid, response, "memo/update")["memo"]
            if memo["version"] != version + 1 or len(memo["text"]) != len(text):
                raise BenchError(f"memo/update: version {memo['version']} (expected {version + 1}), "
                                 f"{len(memo['text'])} characters (expected {len(text)})")
            version = memo["version"]
            samples.append(elapsed)
        if memo["text"] != text:
            raise BenchError("memo/update: the memo's text is not the text sent")
        return samples

    def typing_edits(self, d: Driver, memo_id: str, text: str, version: int, count: int) -> list[int]:
        """`count` memo/edit requests, each inserting one character at the end, as an editor sends keystrokes."""
        head = (b'{"jsonrpc":"2.0","id":%d,"method":"memo/edit","params":{"id":"' + memo_id_bytes(memo_id)
                + b'","baseVersion":%d,"edits":[{"start":%d,"end":%d,"text":"%s"}]}}\n')
        length = len(text.encode())
        samples = []
        for ch in self.keystrokes(count):
            text += ch
            rid = d.next_id
            d.next_id += 1
            elapsed, response, _ = d.round_trip(head % (rid, version, length, length, json_escape(ch)))
            result = d.check(rid, response, "memo/edit")
            length += len(ch.encode())
            if result["version"] != version + 1 or result["length"] != length:
                raise BenchError(f"memo/edit: version {result['version']} (expected {version + 1}), "
                                 f"{result['length']} bytes (expected {length})")
            version = result["version"]
            samples.append(elapsed)
        stored, _ = d.call("memo/select", {"id": memo_id})
        if stored["memo"]["text"] != text:
            raise BenchError("memo/edit: the memo's text is not the text typed")
        return samples

    # -- output

    def write_results(self) -> None:
        os.makedirs(self.args.results_dir, exist_ok=True)
        self.results["meta"]["server"] = self.server_info
        path = os.path.join(self.args.results_dir, "latest.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1, ensure_ascii=False)
        os.replace(path + ".tmp", path)

    def rows(self, n: int, r: dict) -> list[tuple]:
        """(label, stats or None, value text or None, target, met, baseline label, baseline p50, ratio)."""
        sc, bl = r["scenarios"], r["baselines"]
        floor = bl["pipe_floor"]["p50_ns"]
        out = []

        def lat(key, label, target, met, base_label=None, base=None):
            s = sc[key]
            if key not in ("startup_initialize", "startup_didshow") and s["n"] < self.args.ops:
                label += f" [n={s['n']}]"
            out.append((label, s, None, target, met(s), base_label, base, s["p50_ns"] / base if base else None))

        lat("startup_initialize", "start-up → initialize response", "-", lambda s: None,
            "cat start+echo", bl["cat_start"]["p50_ns"])
        lat("startup_didshow", "start-up → first detail/didShow", "< 30 ms, flat in N",
            lambda s: s["p50_ns"] < 30 * MS, "cat start+echo", bl["cat_start"]["p50_ns"])
        quick = lambda s: s["p50_ns"] <= 2 * floor and s["p99_ns"] < 1 * MS
        lat("select", "memo/select (random memo)", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
        lat("list_first", "memo/list first page", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
        lat("list_offset90", f"memo/list offset {sc['list_offset90']['offset']:,}", "p50 < 2 ms",
            lambda s: s["p50_ns"] < 2 * MS, "pipe floor", floor)
        lat("update_1kb", "memo/update 1 KB memo (typing)", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
        lat("update_100kb", "memo/update 100 KB memo (typing)", "p50 < 1 ms",
            lambda s: s["p50_ns"] < 1 * MS, "100 KB line via cat", bl["pipe_100kb"]["p50_ns"])
        if "edit_1kb" in sc:
            lat("edit_1kb", "memo/edit 1 KB memo (typing)", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
            lat("edit_100kb", "memo/edit 100 KB memo (typing)", "p50 < 1 ms",
                lambda s: s["p50_ns"] < 1 * MS, "SQLite row rewrite", bl["sqlite_rewrite_100kb"]["p50_ns"])
        for key in SEARCH_KEYS:
            base = bl.get(f"sqlite_search_{key}", {}).get("p50_ns")
            term = sc[f"search_{key}"]["query"]
            matches = sc[f"search_{key}"]["matches"]
            target = "p50 ≤ 1.5x SQLite" + (", < 10 ms" if key == "common" else "")

            def met(s, base=base, key=key):
                ok = base is not None and s["p50_ns"] <= 1.5 * base
                return ok and s["p50_ns"] < 10 * MS if key == "common" else (ok if base is not None else None)
            hits = f"{matches:,} hit" + ("" if matches == 1 else "s")
            lat(f"search_{key}", f"memo/search {term!r} ({hits})", target, met, "SQLite direct", base)
            lat(f"search_{key}_list", "  then memo/list first page", target, met, "SQLite direct", base)
        t = sc["throughput"]
        cat_rate = bl["cat_pipelined"]["per_second"]
        out.append((f"{t['n']:,} pipelined memo/update", None, f"{t['per_second']:,.0f}/s", "≥ 20,000/s",
                    t["per_second"] >= 20_000, "same lines via cat", f"{cat_rate:,.0f}/s", cat_rate / t["per_second"]))
        imp = sc["import"]["elapsed_ns"]
        raw = bl["raw_insert"]["elapsed_ns"]
        out.append((f"memo/import of {n:,} memos", None, fmt_ns(imp), "< 3 s, ≤ 2.5x raw insert",
                    imp < 3e9 and imp <= 2.5 * raw, "raw SQLite insert", fmt_ns(raw), imp / raw))
        peak = r["peak_rss"]
        out.append((f"peak RSS (max over runs: {peak['during']})", None, f"{peak['kb'] / 1024:.1f} MB",
                    "< 50 MB, flat in N", peak["kb"] < 50 * 1024, None, None, None))
        if "anon_kb" in peak:
            out.append(("  at that run's end: own memory / code pages", None,
                        f"{peak['anon_kb'] / 1024:.1f} / {peak['file_kb'] / 1024:.1f} MB", "", None, None, None, None))
        out.append(("peak RSS (interactive runs)", None, f"{peak['interactive_kb'] / 1024:.1f} MB",
                    "< 50 MB, flat in N", peak["interactive_kb"] < 50 * 1024, None, None, None))
        return out

    def table(self, n: int, r: dict) -> str:
        a = self.args
        d = r["data"]
        header = (f"== {n:,} memos: {d['total_bytes'] / 1e6:.1f} MB of text, mean {d['mean_bytes']} B "
                  f"({d['mean_bytes_without_100kb']} B without the {d['big_memos']:,} memo{'s' if d['big_memos'] != 1 else ''} of 100 KB); "
                  f"{a.ops:,} ops after {a.warmup:,} warm-up ==")
        cols = ("scenario", "p50", "p99", "max", "target", "met", "baseline", "base p50", "ratio")
        lines = []
        for label, s, value, target, met, base_label, base, ratio in self.rows(n, r):
            if s is not None:
                p50, p99, mx = fmt_ns(s["p50_ns"]), fmt_ns(s["p99_ns"]), fmt_ns(s["max_ns"])
            else:
                p50, p99, mx = value, "", ""
            base_text = fmt_ns(base) if isinstance(base, (int, float)) else (base or "")
            lines.append((label, p50, p99, mx, target, {True: "yes", False: "NO", None: "-"}[met],
                          base_label or "", base_text, f"{ratio:.2f}x" if ratio is not None else ""))
        bl = r["baselines"]
        sel = r["scenarios"]["select"]
        notes = [
            f"pipe floor (cat, {bl['pipe_floor']['bytes']} B line, runs before and after the server's): "
            f"p50 {fmt_ns(bl['pipe_floor']['p50_ns'])} (before {fmt_ns(bl['pipe_floor_before']['p50_ns'])}, "
            f"after {fmt_ns(bl['pipe_floor_after']['p50_ns'])}), "
            f"p99 {fmt_ns(bl['pipe_floor']['p99_ns'])}, max {fmt_ns(bl['pipe_floor']['max_ns'])}; "
            f"100 KB line via cat: p50 {fmt_ns(bl['pipe_100kb']['p50_ns'])}, p99 {fmt_ns(bl['pipe_100kb']['p99_ns'])}; "
            f"cat start+echo: p50 {fmt_ns(bl['cat_start']['p50_ns'])}",
        ]
        if "rounds_per_second" in r["scenarios"].get("throughput", {}):
            rates = r["scenarios"]["throughput"]["rounds_per_second"]
            notes.append(f"pipelined memo/update: the median of {len(rates)} rounds, taken in turns with the other sizes' "
                         f"({', '.join(f'{x:,.0f}' for x in rates)} a second); cat's figures below, from the first round")
        if "cat_pipelined_replies" in bl:
            req, rep = bl["cat_pipelined"], bl["cat_pipelined_replies"]
            notes.append(f"pipelined updates through cat alone: the requests ({req['bytes'] / 1e6:,.0f} MB) at "
                         f"{req['per_second']:,.0f}/s, the server's replies and notifications ({rep['bytes'] / 1e6:,.0f} MB) "
                         f"at {rep['per_second']:,.0f}/s: a server that did nothing but read and write cannot beat the slower")
        if "fsync" in bl:
            notes.append(f"fsync floor (4 KB write + fsync in the stores' folder): p50 {fmt_ns(bl['fsync']['p50_ns'])}, "
                         f"p99 {fmt_ns(bl['fsync']['p99_ns'])}: a durable commit per update costs at least this")
        direct = [f"{self.results['sizes'][str(n)]['scenarios'][f'search_{k}']['query']!r} p50 "
                  f"{fmt_ns(bl[f'sqlite_search_{k}']['p50_ns'])} p99 {fmt_ns(bl[f'sqlite_search_{k}']['p99_ns'])} "
                  f"(n={bl[f'sqlite_search_{k}']['n']:,})"
                  for k in SEARCH_KEYS if f"sqlite_search_{k}" in bl]
        if direct:
            notes.append("SQLite direct (count + first page): " + "; ".join(direct))
        lookups = [f"{bl[f'sqlite_lookup_{k}']['query']!r} p50 {fmt_ns(bl[f'sqlite_lookup_{k}']['p50_ns'])} "
                   f"(n={bl[f'sqlite_lookup_{k}']['n']:,})"
                   for k in SEARCH_KEYS if f"sqlite_lookup_{k}" in bl]
        if lookups:
            notes.append("the full-text index's lookup alone (its matches counted, SQLite direct, in the same turns): "
                         + "; ".join(lookups) + ": a search that counts its matches cannot take less")
        raw_notes = [f"raw insert without the index (the import's baseline): {fmt_ns(bl['raw_insert']['elapsed_ns'])}",
                     f"with the FTS trigger per row: {fmt_ns(bl['raw_insert_fts']['elapsed_ns'])}"]
        if "raw_insert_rebuild" in bl:
            raw_notes.append(f"plain insert + one FTS 'rebuild': {fmt_ns(bl['raw_insert_rebuild']['elapsed_ns'])}")
        if "background_index" in r["scenarios"]:
            raw_notes.append(f"the server's background indexing after the import: "
                             f"{fmt_ns(r['scenarios']['background_index']['elapsed_ns'])}")
        notes.append("; ".join(raw_notes))
        written = [(label, entry.get("written_bytes")) for label, entry in (
            ("the import", r["scenarios"].get("import", {})), ("the raw insert", bl["raw_insert"]),
            ("the background indexing after the import", r["scenarios"].get("background_index", {})))]
        if all(value is not None for _, value in written):
            notes.append("written for storage (each process's write_bytes, the log and its checkpoints included): "
                         + "; ".join(f"{label} {value / 1e6:,.0f} MB" for label, value in written)
                         + f"; for {r['data']['total_bytes'] / 1e6:.1f} MB of text")
        if "p50_ns_100kb_memos" in sel:
            notes.append(f"memo/select: {sel['memos_of_100kb']} of the {sel['n']} selected memos were 100 KB "
                         f"(their p50 {fmt_ns(sel['p50_ns_100kb_memos'])}); p99 of the others "
                         f"{fmt_ns(sel['p99_ns_other_memos'])}")
        notes.append("ratio = p50 / baseline p50 (for throughput: baseline rate / server rate)")
        return header + "\n" + format_table(cols, lines) + "\n" + "\n".join(notes)

    def scaling_table(self) -> str:
        sizes = [str(n) for n in self.args.sizes]
        if len(sizes) < 2:
            return ""
        keys = [k for k in PLOT_SCENARIOS if all(k in self.results["sizes"][s]["scenarios"] for s in sizes)]
        lines = []
        for k in keys:
            p50s = [self.results["sizes"][s]["scenarios"][k]["p50_ns"] for s in sizes]
            lines.append((PLOT_SCENARIOS[k], *map(fmt_ns, p50s), f"{p50s[-1] / p50s[0]:.2f}x"))
        rates = [self.results["sizes"][s]["scenarios"]["throughput"]["per_second"] for s in sizes]
        lines.append(("pipelined updates/s", *(f"{x:,.0f}" for x in rates), f"{rates[-1] / rates[0]:.2f}x"))
        rss = [self.results["sizes"][s]["peak_rss"]["interactive_kb"] for s in sizes]
        lines.append(("peak RSS, interactive", *(f"{x / 1024:.1f} MB" for x in rss), f"{rss[-1] / max(1, rss[0]):.2f}x"))
        rss = [self.results["sizes"][s]["peak_rss"]["kb"] for s in sizes]
        lines.append(("peak RSS, all runs", *(f"{x / 1024:.1f} MB" for x in rss), f"{rss[-1] / max(1, rss[0]):.2f}x"))
        cols = ("p50 by number of memos", *(f"{int(s):,}" for s in sizes), f"{int(sizes[-1]):,} / {int(sizes[0]):,}")
        return "== scaling (flat curves: the last column near 1.00x) ==\n" + format_table(cols, lines)

    def plot(self) -> None:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            log("WARNING: matplotlib is missing; no plot (python3 -m pip install matplotlib)")
            return
        sizes = [int(s) for s in self.results["sizes"]]
        res = [self.results["sizes"][str(s)] for s in sizes]
        fig, axes = plt.subplots(1, 2, figsize=(15, 6.5), sharey=True)
        cmap = plt.get_cmap("tab20")
        for ax, stat, title in ((axes[0], "p50_ns", "p50"), (axes[1], "p99_ns", "p99")):
            for i, (key, label) in enumerate(PLOT_SCENARIOS.items()):
                ys = [r["scenarios"][key][stat] / 1000 for r in res]
                ax.plot(sizes, ys, marker="o", color=cmap(i % 20), label=label.strip(),
                        linestyle="--" if key.endswith("_list") else "-")
            for key, label, style, color in (("pipe_floor", "baseline: pipe floor (cat)", "--", "black"),
                                             ("pipe_100kb", "baseline: 100 KB line via cat", ":", "black"),
                                             ("fsync", "baseline: 4 KB write + fsync", "--", "grey"),
                                             ("sqlite_search_common", "baseline: SQLite direct, common term", "-.",
                                              "black")):
                if all(key in r["baselines"] for r in res):
                    ax.plot(sizes, [r["baselines"][key][stat] / 1000 for r in res], linestyle=style, color=color,
                            linewidth=1.2, label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(sizes)
            ax.minorticks_off() if len(sizes) > 1 else None
            ax.set_xticklabels([f"{s // 1000}k" if s >= 1000 else str(s) for s in sizes])
            ax.set_xlabel("number of memos")
            ax.set_title(f"{title} latency per request")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("µs (log)")
        axes[1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
        m = self.results["meta"]
        fig.suptitle(f"CloudNotes {self.server_info.get('version', '')} — commit {m['git_commit'][:10]} — {m['date']}",
                     fontsize=10)
        fig.tight_layout()
        path = os.path.join(self.args.results_dir, "latency.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        log(f"plot: {path}")


PLOT_SCENARIOS = {
    "startup_initialize": "start-up → initialize",
    "startup_didshow": "start-up → detail/didShow",
    "select": "memo/select",
    "list_first": "memo/list first page",
    "list_offset90": "memo/list offset 90%",
    "update_1kb": "memo/update 1 KB",
    "update_100kb": "memo/update 100 KB",
    "edit_1kb": "memo/edit 1 KB",
    "edit_100kb": "memo/edit 100 KB",
    "search_rare": "memo/search rare",
    "search_rare_list": "  memo/list after rare",
    "search_common": "memo/search common",
    "search_common_list": "  memo/list after common",
    "search_ko2": "memo/search 2-char Korean",
    "search_ko2_list": "  memo/list after 2-char",
    "search_en2": "memo/search 2-char ASCII",
    "search_en2_list": "  memo/list after 2-char ASCII",
}


def width(text: str) -> int:
    """Columns on a terminal: East Asian wide characters (Hangul) take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def format_table(cols: tuple, rows: list[tuple]) -> str:
    widths = [max(width(str(c)), *(width(str(r[i])) for r in rows)) for i, c in enumerate(cols)]
    right = [i for i, c in enumerate(cols) if i > 0 and c not in ("target", "baseline", "met")]

    def line(values):
        cells = []
        for i, (v, w) in enumerate(zip(values, widths)):
            pad = " " * (w - width(str(v)))
            cells.append(pad + str(v) if i in right else str(v) + pad)
        return "  ".join(cells).rstrip()
    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows])


# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------

def json_escape(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False)[1:-1].encode()


def memo_id_bytes(memo_id: str) -> bytes:
    return memo_id.encode().replace(b"%", b"%%")


def pipelined(d: Driver, lines: list[bytes], count_every_line: bool = False,
              received: list[bytes] | None = None) -> tuple[int, list[bytes]]:
    """Writes all lines from a thread without waiting and reads every response: (ns, responses).

    The writer is a thread so that neither side blocks on a full pipe. The clock runs from the first
    write to the last response. `received`, if given, gets every line read (notifications too).

    While the clock runs, the reader only reads into one buffer, made (and its pages touched) before,
    and counts the responses there; the lines are split off after the clock stops. The driver shares
    this machine's two CPUs with the server, so its own work counts against the server's figure: a
    reader that split each chunk into new line objects as it came (copying the 266 MB that 10,000
    updates write back twice, into memory new to it) measured the same binary at 16,627 updates a
    second where this one measures 19,177 (medians of 5 runs each, in turns; bench/HISTORY.md).
    """
    chunks, chunk, size = [], [], 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= 1 << 16:
            chunks.append(b"".join(chunk))
            chunk, size = [], 0
    if chunk:
        chunks.append(b"".join(chunk))
    failure = []

    def writer():
        try:
            for c in chunks:
                d.write(c)
        except BenchError as e:
            failure.append(e)

    # Room for all that comes back: the same lines from `cat`; from the server, each reply carries the
    # text twice (and its body), beside a notification.
    sent = sum(map(len, lines))
    buffer = bytearray((sent if count_every_line else 3 * sent) + (1 << 20))
    view = memoryview(buffer)
    # What marks a line to count, newline first: a newline is put before the first line too.
    marker = b"\n" if count_every_line else b"\n" + RESPONSE_PREFIXES[0]
    buffer[0] = ord("\n")
    read, expected, counted, end = d.proc.stdout.readinto1, len(lines), 0, 1
    lowest = 1 if count_every_line else 0  # the newline put first is no line
    # Whether the first lines have been looked at for responses that begin otherwise: those would never be
    # counted, and the reader would wait for the watchdog.
    looked = count_every_line

    def more_to_read() -> bool:
        """Whether a response has yet to begin, or the last one to end."""
        if counted < expected:
            return True
        return not count_every_line and buffer.find(b"\n", buffer.rfind(marker, 0, end) + 1, end) < 0

    thread = threading.Thread(target=writer, daemon=True)
    t0 = perf_ns()
    thread.start()
    while more_to_read():
        if end == len(buffer):
            raise BenchError(f"{d.label}: wrote back more than the {len(buffer):,} bytes of room for {sent:,} sent")
        got = read(view[end:])
        if not got:
            raise d.died("echoing pipelined lines" if count_every_line else "reading pipelined responses")
        # A marker that began in the bytes before this read and ends in it is counted now, not before.
        counted += buffer.count(marker, max(lowest, end - len(marker) + 1), end + got)
        end += got
        if not looked and counted == 0 and buffer.count(b"\n", 1, end) >= 8:
            looked = True
            unmarked = [line for line in bytes(view[1:end]).split(b"\n")[:-1] if is_response(line)]
            if unmarked:
                raise BenchError(f"{d.label}: a response begins {unmarked[0][:40]!r}, not {RESPONSE_PREFIXES[0]!r}, "
                                 "which the pipelined reader counts")
    elapsed = perf_ns() - t0
    thread.join()
    if failure:
        raise failure[0]
    complete = bytes(view[1:end]).split(b"\n")[:-1]
    del view, buffer
    if received is not None:
        received.extend(complete)
    responses = [got for got in complete if count_every_line or is_response(got)]
    if len(responses) != expected:
        raise BenchError(f"{d.label}: {len(responses)} responses to {expected} pipelined lines")
    return elapsed, responses


def fsync_baseline(folder: str, count: int, warmup: int) -> dict:
    """Append 4 KB to a file in the stores' folder and fsync it, per op: what one durable commit costs at least."""
    path = os.path.join(folder, "fsync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    page, samples = b"\0" * 4096, []
    try:
        for _ in range(count):
            t0 = perf_ns()
            os.write(fd, page)
            os.fsync(fd)
            samples.append(perf_ns() - t0)
    finally:
        os.close(fd)
        os.remove(path)
    return summarize(samples[warmup:])


def sqlite_rewrite_baseline(path: str, text: str, count: int, warmup: int) -> dict:
    """Rewrite one row holding `text`, one character longer per committed transaction (WAL, synchronous=NORMAL,
    as the server's store): what storing a memo's whole text per keystroke costs SQLite alone."""
    remove_store(path)
    db = sqlite3.connect(path, isolation_level=None)
    samples = []
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("CREATE TABLE memo (localID INTEGER PRIMARY KEY, text BLOB NOT NULL, version INTEGER NOT NULL)")
        data = text.encode()
        db.execute("INSERT INTO memo VALUES (1, ?, 1)", (data,))
        for i in range(count):
            data += TYPED_CHARS[i % len(TYPED_CHARS)].encode()
            t0 = perf_ns()
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE memo SET text = ?, version = version + 1 WHERE localID = 1", (data,))
            db.execute("COMMIT")
            samples.append(perf_ns() - t0)
    finally:
        db.close()
        remove_store(path)
    return summarize(samples[warmup:]) | {"bytes": len(text.encode())}


def remove_store(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def server_sqlite_version(binary: str) -> str:
    """The SQLite library the server links (from ldd), asked for its version through ctypes."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=10).stdout
        for row in out.splitlines():
            if "libsqlite3" in row and "=>" in row:
                lib = row.split("=>")[1].split("(")[0].strip()
                version = ctypes.CDLL(lib).sqlite3_libversion
                version.restype = ctypes.c_char_p
                return f"{version().decode()} ({lib})"
        return "not dynamically linked (unknown)"
    except Exception as e:  # informational only
        return f"unknown ({e})"


def written_bytes(pid: int | str = "self") -> int | None:
    """The bytes a process has made dirty for storage so far (`write_bytes` of /proc/PID/io, counted as
    pages are dirtied: a file removed before it reaches the disk still counts), or None where unknown."""
    try:
        with open(f"/proc/{pid}/io") as f:
            for row in f:
                if row.startswith("write_bytes:"):
                    return int(row.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def bytes_between(before: int | None, after: int | None) -> int | None:
    return after - before if before is not None and after is not None else None


def unindexed_count(store: str) -> int:
    """Memos whose text the server has not put in the full-text index yet (0 for a schema without the column)."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        columns = {row[1] for row in con.execute("PRAGMA table_info(memo)")}
        if "indexed" not in columns:
            return 0
        # A text that holds NUL stays out of the index for good (the index would end it at the NUL).
        return con.execute("SELECT count(*) FROM memo WHERE indexed = 0 AND deleted = 0 AND instr(text, X'00') = 0").fetchone()[0]
    finally:
        con.close()


def search_condition(term: str) -> tuple[str, str] | None:
    """How SQLite alone finds the memos that hold `term`, as SQL and its argument: the server's phrase
    of the trigram index for 3 or more characters, else the text itself, as the server reads the memos
    its index does not hold (Sources/CloudNotesStore/SearchFilter.swift). For a short term without case
    or in ASCII the server asks the index too (every index term that begins with it), which plain SQL
    cannot: the baseline is then the query one would write by hand."""
    if len(term) >= 3:
        return "memo.localID IN (SELECT rowid FROM memo_fts WHERE memo_fts MATCH ?)", '"' + term.replace('"', '""') + '"'
    if term.isascii():
        escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return "CAST(memo.text AS TEXT) LIKE ? ESCAPE '\\'", "%" + escaped + "%"
    if term.lower() == term.upper():
        return "instr(memo.text, ?) > 0", term
    return None  # the server uses its own case-folding function: no direct equivalent


def visible_condition(con: sqlite3.Connection) -> str:
    """The condition the server's list queries put on `memo` before the filter.

    The server spells it exactly as the WHERE of its partial list-order index (`memo_order`), so that
    SQLite can use the index; read it from there, so the baseline follows the schema. Else `deleted = 0`.
    """
    row = con.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'memo_order'").fetchone()
    if row and row[0] and " WHERE " in row[0].upper():
        sql = row[0]
        return sql[sql.upper().rindex(" WHERE ") + len(" WHERE "):].strip().rstrip(";")
    return "deleted = 0"


class DirectSearch:
    """The server's search as SQL on the store file, with python's sqlite3: count(*) + the first page."""

    def __init__(self, store: str, term: str):
        self.term = term
        self.matches = None
        condition = search_condition(term)
        self.possible = condition is not None
        if not self.possible:
            return
        where, self.arg = condition
        self.con = sqlite3.connect(store)
        visible = visible_condition(self.con)
        # A count that reads every text reads the table in its order (`NOT INDEXED`): walking the partial
        # index of visible memos would read each text out of order, 2.3x as long at 100,000 memos. The page
        # keeps the index: it reads the newest memos until it has 100.
        scans = "memo_fts MATCH" not in where
        self.count_sql = f"SELECT count(*) FROM memo{' NOT INDEXED' if scans else ''} WHERE {visible} AND {where}"
        self.page_sql = (f"SELECT id, title, preview, modifiedAt, seq FROM memo WHERE {visible} AND {where} "
                         f"ORDER BY modifiedAt DESC, seq DESC LIMIT 100 OFFSET 0")
        # A term the full-text index serves: the index's own part of the search, counting its matches inside
        # SQLite (fetching 18,600 rowids into Python would add Python's cost per row), is the floor of any
        # search that counts its matches.
        fts = "memo_fts MATCH" in where
        self.lookup_sql = "SELECT count(*) FROM memo_fts WHERE memo_fts MATCH ?" if fts else None

    def run(self) -> int:
        """One search: the ns it took."""
        t0 = perf_ns()
        total = self.con.execute(self.count_sql, (self.arg,)).fetchone()[0]
        rows = self.con.execute(self.page_sql, (self.arg,)).fetchall()
        elapsed = perf_ns() - t0
        self.matches = total
        if len(rows) != min(100, total):
            raise BenchError(f"SQLite direct {self.term!r}: {len(rows)} rows of {total}")
        return elapsed

    def run_lookup(self) -> int:
        """The index lookup alone: the ns it took."""
        t0 = perf_ns()
        self.con.execute(self.lookup_sql, (self.arg,)).fetchone()
        return perf_ns() - t0

    def described(self) -> dict:
        return {"query": self.term, "matches": self.matches, "sql_count": self.count_sql, "sql_page": self.page_sql}

    def close(self) -> None:
        if self.possible:
            self.con.close()


def raw_insert_baseline(path: str, schema: list[str], memos: list[dict], seed: int, mode: str = "plain") -> dict:
    """The same rows into a fresh file with the server's schema, in one transaction.

    `plain`: rows only, not indexed (what the server's import writes; it indexes later, in the
    background). `triggers`: each row indexed by the schema's FTS insert trigger as it goes in.
    `rebuild`: rows, then the FTS index built once at the end of the same transaction.
    """
    rebuild = mode == "rebuild"
    remove_store(path)
    rng = random.Random(seed)
    rows = []
    for seq, entry in enumerate(reversed(memos), start=1):  # the server inserts the last entry first
        text = memo_text(entry)
        millis = entry["last_modified"] * 1000
        rows.append((str(uuid.UUID(int=rng.getrandbits(128), version=4)), text.encode(), entry["title"].strip(),
                     memo_preview(entry["body"]), millis, millis, seq))
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")  # as the server (its default durability, "committed")
    fts = None
    for statement in schema:
        head = statement.upper()
        if head.startswith("CREATE VIRTUAL TABLE"):
            fts = statement.split()[3].strip('"')
        if rebuild and head.startswith("CREATE TRIGGER") and "AFTER INSERT" in head:
            continue
        con.execute(statement)
    written_before = written_bytes()
    t0 = perf_ns()
    con.execute("BEGIN IMMEDIATE")
    columns = {row[1] for row in con.execute("PRAGMA table_info(memo)")}
    # `indexed = 1` makes the schema's insert trigger index each row as it goes in, as a server would
    # that indexed during the import; the rebuild variant indexes everything once at the end.
    indexed_column = ", indexed" if "indexed" in columns else ""
    indexed_value = (", 0" if mode == "plain" else ", 1") if "indexed" in columns else ""
    con.executemany(f"INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted{indexed_column}) "
                    f"VALUES (?, ?, ?, ?, ?, ?, 1, ?, 0{indexed_value})", rows)
    if rebuild:
        con.execute(f"INSERT INTO {fts}({fts}) VALUES('rebuild')")
    con.execute("COMMIT")
    elapsed = perf_ns() - t0
    written = bytes_between(written_before, written_bytes())
    indexed = con.execute(f"SELECT count(*) FROM {fts}_docsize").fetchone()[0]
    con.close()
    if indexed != (0 if mode == "plain" and "indexed" in columns else len(rows)):
        raise BenchError(f"raw insert baseline: {indexed} rows in the FTS index, expected {len(rows)}")
    size = os.path.getsize(path) + (os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0)
    remove_store(path)
    return {"n": 1, "rows": len(rows), "elapsed_ns": elapsed, "p50_ns": elapsed, "p99_ns": elapsed,
            "max_ns": elapsed, "file_bytes": size, "written_bytes": written, "fts": mode}


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description="CloudNotes benchmark (see bench/README.md).")
    p.add_argument("--bin", default=os.path.join(REPO_DIR, ".build", "release", "cloudnotes"),
                   help="the cloudnotes binary (default: .build/release/cloudnotes)")
    p.add_argument("--sizes", default=None, help="numbers of memos, comma-separated (default 1000,10000,100000)")
    p.add_argument("--ops", type=int, default=None, help="timed operations per scenario (default 1000)")
    p.add_argument("--warmup", type=int, default=None, help="untimed operations before them (default 100)")
    p.add_argument("--starts", type=int, default=None, help="server starts for the start-up figures (default 20)")
    p.add_argument("--pipelined", type=int, default=None, help="updates sent without waiting (default 10000)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: sizes 1000,10000, 200 ops, 20 warm-up, 5 starts, 1000 pipelined updates")
    p.add_argument("--seed", type=int, default=20240521, help="data seed (default 20240521)")
    p.add_argument("--rare-term", default="xylophone", help="search term in ~0.01%% of memos (default xylophone)")
    p.add_argument("--common-term", default="meeting", help="common search term, 3+ characters (default meeting)")
    p.add_argument("--short-term", default="회의", help="2-character Korean search term (default 회의)")
    p.add_argument("--short-ascii-term", default="me", help="2-character ASCII search term (default me)")
    p.add_argument("--results-dir", default=os.path.join(BENCH_DIR, "results"), help="default bench/results")
    p.add_argument("--work-dir", default=None,
                   help="where data and stores go (default: a new temporary folder, removed at the end); "
                        "data files found there are reused")
    p.add_argument("--no-rebuild-baseline", action="store_true",
                   help="skip the extra raw-insert baseline that builds the FTS index once at the end")
    p.add_argument("--keep", action="store_true", help="keep the work dir and stores")
    p.add_argument("--budget", type=float, default=300.0,
                   help="seconds after which a slow scenario stops early (with at least 50 timed ops; "
                        "the table marks it); 0: never (default 300)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before a hung process is killed")
    args = p.parse_args(argv)
    quick = {"sizes": "1000,10000", "ops": 200, "warmup": 20, "starts": 5, "pipelined": 1000}
    full = {"sizes": "1000,10000,100000", "ops": 1000, "warmup": 100, "starts": 20, "pipelined": 10000}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.sizes = [int(s.replace("_", "")) for s in str(args.sizes).split(",") if s.strip()]
    if any(n < 10 for n in args.sizes):
        p.error("each size must be at least 10 memos")
    if args.ops < 1 or args.warmup < 0 or args.starts < 1 or args.pipelined < 1:
        p.error("--ops, --starts and --pipelined must be positive, --warmup not negative")
    if len(args.common_term) < 3 or len(args.rare_term) < 3:
        p.error("the rare and common terms need 3 or more characters")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not os.access(args.bin, os.X_OK):
        print(f"error: no executable at {args.bin} (build it, or pass --bin)", file=sys.stderr)
        return 2
    temporary = args.work_dir is None
    if temporary:
        args.work_dir = tempfile.mkdtemp(prefix="cloudnotes-bench-")
    args.work_dir = os.path.abspath(args.work_dir)
    bench = Bench(args)
    try:
        return bench.run()
    except BenchError as e:
        print(f"\nBENCHMARK ABORTED: {e}", file=sys.stderr)
        if bench.results:
            bench.results["aborted"] = str(e)
            bench.write_results()
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        if temporary and not args.keep:
            shutil.rmtree(args.work_dir, ignore_errors=True)
        elif args.keep or not temporary:
            log(f"work dir kept: {args.work_dir}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
