"""The data: realistic Korean + English memos from a fixed seed, in the import format ("The data" in
bench/README.md)."""

from __future__ import annotations

import json
import math
import random

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


def write_import_file(memos: list[dict], path: str) -> None:
    """The memos as an import file (a JSON array), compact and in UTF-8."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(memos, f, ensure_ascii=False, separators=(",", ":"))
