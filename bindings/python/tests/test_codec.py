"""test_codec.py -- every type the codec supports round-trips to the same type
and value, on a step's first run and on its replay; what it cannot journal
raises DurableSerializationError naming the step and the type, before
anything is journaled; decoding imports nothing and runs no code chosen by
the journal.  Pydantic v2 models are tested with pydantic when a v2 is
installed, and always with a stand-in class that has model_dump and
model_validate."""

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import json
import math
import pathlib
import random
import sys
import typing
import unittest
import uuid
import zoneinfo

from helpers import LilCase, lil

from lil import _codec


class Color(enum.Enum):
    RED = "red"
    BLUE = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 9


class Perm(enum.Flag):
    R = 4
    W = 2


@dataclasses.dataclass
class Point:
    x: int
    y: float
    tags: tuple = ()


@dataclasses.dataclass(frozen=True)
class Frozen:
    when: dt.date
    inner: Point
    hidden: int = dataclasses.field(default=7, init=False)


class Pair(typing.NamedTuple):
    a: int
    b: str


class StandIn:
    """A Pydantic v2 stand-in: model_dump / model_validate only."""

    validated = 0

    def __init__(self, name, size):
        self.name = name
        self.size = size

    def model_dump(self, mode="python", by_alias=False):
        return {"name": self.name, "size": self.size}

    @classmethod
    def model_validate(cls, data):
        cls.validated += 1
        return cls(data["name"], data["size"])

    def __eq__(self, other):
        return type(other) is StandIn and (self.name, self.size) == (other.name, other.size)


class Opaque:
    pass


SAMPLES = [
    None, True, False, 0, -1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**400, -(7**999),
    0.0, -0.0, 1.5, 1e308, 5e-324, 0.1 + 0.2, float("inf"), float("-inf"),
    "", "héllo ✓ \u0000 \ud7ff", "$lil", "x" * 10000, "lone \ud800 surrogate",
    {"\udfff": ["\ud83d"]},
    [], [1, [2, [3]]], (), (1,), (1, "a", (2.5, None)),
    {}, {"a": 1, "b": [1, 2]}, {1: "one", 2.5: "x", None: 0, True: "t", (1, 2): "tuple"},
    {"$lil": "not a tag", "v": 1}, {"a": {"$lil": "tuple"}},
    set(), {1, 2, 3}, {"b", "a"}, frozenset({(1, 2), "z"}), {frozenset({1})},
    b"", b"\x00\xffbytes", bytearray(b"ab"), complex(1.5, -2), complex(float("nan"), 0),
    dt.datetime(2024, 2, 29, 23, 59, 59, 999999),
    dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-3), "BRT")),
    dt.datetime(2024, 11, 3, 1, 30, tzinfo=zoneinfo.ZoneInfo("America/New_York"), fold=1),
    dt.date(1, 1, 1), dt.date(9999, 12, 31),
    dt.time(0, 0), dt.time(23, 59, 59, 1, tzinfo=dt.timezone.utc),
    dt.timedelta(0), dt.timedelta(days=-3, seconds=5, microseconds=7),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    decimal.Decimal("3.14"), decimal.Decimal("-0"), decimal.Decimal("1E+3"),
    decimal.Decimal("NaN"), decimal.Decimal("-Infinity"), decimal.Decimal("0.000"),
    pathlib.Path("/tmp/x y"), pathlib.PurePosixPath("a/b"), pathlib.PureWindowsPath("C:/x"),
    collections.OrderedDict([("b", 1), ("a", 2)]), collections.Counter("abracadabra"),
    Color.RED, Color.BLUE, Level.HIGH, Perm.R | Perm.W,
    Point(1, 2.5, ("t",)), Frozen(dt.date(2020, 5, 17), Point(0, -0.0)),
    Pair(3, "x"), StandIn("box", 3),
    {"mixed": [Point(1, 1.0), (Color.RED, {1, 2}), {dt.date(2020, 1, 1): b"k"}]},
]


def same(a, b):
    """Equal in type and value, all the way down (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, decimal.Decimal):
        return str(a) == str(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (dt.datetime, dt.time)):
        return a == b and a.tzinfo == b.tzinfo and a.fold == b.fold and \
            type(a.tzinfo) is type(b.tzinfo) and str(a) == str(b)
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


class CodecTest(LilCase):
    def test_every_type_round_trips(self):
        for v in SAMPLES:
            with self.subTest(value=repr(v)[:80]):
                text = _codec.encode(v, "test")
                json.loads(text)  # standard JSON: no NaN tokens
                self.assertTrue(same(_codec.decode(text), v), text[:200])

    def test_first_run_and_replay_return_the_same(self):
        calls = []

        @lil.durable(goal_id="codec", dir=self.dir)
        def wf():
            out = []
            for i, v in enumerate(SAMPLES):
                out.append(lil.step(f"v{i}", lambda v=v: (calls.append(1), v)[1]))
            return out

        first = wf()
        self.assertEqual(len(calls), len(SAMPLES))
        again = wf()  # completed: the journaled result
        self.assertEqual(len(calls), len(SAMPLES))
        for a, b, v in zip(first, again, SAMPLES):
            with self.subTest(value=repr(v)[:80]):
                self.assertTrue(same(a, v))
                self.assertTrue(same(b, v))

    def test_replay_of_steps_decodes_the_same(self):
        @lil.durable(goal_id="replay", dir=self.dir)
        def wf(fail):
            out = [lil.step(f"v{i}", lambda v=v: v) for i, v in enumerate(SAMPLES)]
            if fail:
                raise RuntimeError("stop before completing")
            return len(out)

        with self.assertRaises(RuntimeError):
            wf(True)
        seen = []

        @lil.durable(goal_id="replay", dir=self.dir)
        def wf2():
            for i, v in enumerate(SAMPLES):
                seen.append(lil.step(f"v{i}", lambda: self.fail("ran again")))
            return 0

        wf2()
        for a, v in zip(seen, SAMPLES):
            self.assertTrue(same(a, v), repr(v)[:80])

    def test_random_floats_and_ints_exact(self):
        rnd = random.Random(7)
        for _ in range(2000):
            f = rnd.choice([rnd.random() * 10 ** rnd.randint(-300, 300),
                            struct_float(rnd.getrandbits(64))])
            n = rnd.getrandbits(rnd.randint(1, 300)) * rnd.choice([1, -1])
            v = [f, n]
            self.assertTrue(same(_codec.decode(_codec.encode(v, "t")), v), repr(v))

    def test_sets_encode_the_same_whatever_their_order(self):
        a = _codec.encode({"x", "y", "z", 1, (2, 3)}, "t")
        b = _codec.encode({(2, 3), 1, "z", "y", "x"}, "t")
        self.assertEqual(a, b)

    def test_unsupported_type_names_step_and_type(self):
        @lil.durable(goal_id="bad", dir=self.dir)
        def wf():
            return lil.step("fetch", self.counter("fetch", {"ok": [Opaque()]}))

        with self.assertRaises(lil.DurableSerializationError) as cm:
            wf()
        self.assertIsInstance(cm.exception, TypeError)
        msg = str(cm.exception)
        self.assertIn("step 'fetch'", msg)
        self.assertIn("Opaque", msg)
        self.assertEqual(self.steps("bad"), [])  # nothing journaled
        with self.assertRaises(lil.DurableSerializationError):
            wf()
        self.assertEqual(self.lines(), ["fetch", "fetch"])  # not journaled: ran again

    def test_unsupported_tz_and_local_class(self):
        class Local:
            pass

        @dataclasses.dataclass
        class LocalData:
            x: int

        class OddTz(dt.tzinfo):
            def utcoffset(self, d):
                return dt.timedelta(0)

        for v in (Local(), LocalData(1), dt.datetime(2020, 1, 1, tzinfo=OddTz()),
                  lambda: 1, object(), {1: iter([])}):
            with self.subTest(value=type(v).__name__):
                with self.assertRaises(lil.DurableSerializationError):
                    _codec.encode(v, "x")

    def test_cycles_raise(self):
        a = []
        a.append(a)
        with self.assertRaises(lil.DurableSerializationError):
            _codec.encode(a, "x")

    def test_registered_local_classes_and_custom_types(self):
        @dataclasses.dataclass
        class LocalData:
            x: int

        lil.register(LocalData, name="tests:LocalData")
        v = LocalData(5)
        self.assertTrue(same(_codec.roundtrip(v), v))

        class Money:
            def __init__(self, cents):
                self.cents = cents

        lil.register(Money, name="tests:Money", encode=lambda m: m.cents,
                     decode=lambda c: Money(c))
        back = _codec.roundtrip({"price": Money(420)})
        self.assertIs(type(back["price"]), Money)
        self.assertEqual(back["price"].cents, 420)

    def test_decoding_imports_nothing_and_runs_nothing(self):
        self.assertNotIn("http.server", sys.modules)
        for cls in ("http.server:HTTPServer", "json.tool:main", "os:system"):
            for tag in ("dataclass", "enum", "namedtuple", "model"):
                doc = json.dumps({"$lil": tag, "c": cls, "v": {"a": 1}})
                with self.subTest(cls=cls, tag=tag):
                    with self.assertRaises(lil.DurableSerializationError):
                        _codec.decode(doc)
        self.assertNotIn("http.server", sys.modules)
        self.assertNotIn("json.tool", sys.modules)
        for doc in ('{"$lil":"nope","v":1}', '{"$lil":"custom","c":"x:y","v":1}', "[1,",
                    '"\\ud800"x', '{"$lil":"opaque","v":"socket"}'):
            with self.assertRaises(lil.DurableSerializationError):
                _codec.decode(doc)

    def test_dataclass_rebuilt_without_init(self):
        calls = []

        @dataclasses.dataclass
        class Watched:
            x: int

            def __post_init__(self):
                calls.append(self.x)

        lil.register(Watched, name="tests:Watched")
        back = _codec.roundtrip(Watched(3))
        self.assertEqual(back.x, 3)
        self.assertEqual(calls, [3])  # only the original construction

    def test_pydantic_stand_in(self):
        StandIn.validated = 0
        back = _codec.roundtrip([StandIn("a", 1)])
        self.assertEqual(back, [StandIn("a", 1)])
        self.assertEqual(StandIn.validated, 1)

    def test_pydantic_v2_when_installed(self):
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed (the stand-in test covers the path)")
        if not pydantic.VERSION.startswith("2"):
            self.skipTest(f"pydantic {pydantic.VERSION} is not v2")
        global Model, Inner  # module level: found on decode

        class Inner(pydantic.BaseModel):
            when: dt.datetime
            tags: typing.Tuple[int, ...]

        class Model(pydantic.BaseModel):
            name: str = pydantic.Field(alias="Name")
            inner: Inner
            blob: bytes
            any_value: typing.Any = None

        Inner.__qualname__ = "Inner"
        Model.__qualname__ = "Model"
        m = Model(Name="x", inner=Inner(when=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc),
                                        tags=(1, 2)), blob=b"\x00", any_value=(1, {2}))
        back = _codec.roundtrip(m)
        self.assertIs(type(back), Model)
        self.assertEqual(back, m)
        self.assertEqual(back.any_value, (1, {2}))


def struct_float(bits):
    import struct
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


if __name__ == "__main__":
    unittest.main()
