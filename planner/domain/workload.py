"""What the user wants to run: `train`, `serve` and `reserve` workloads, and commitments."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from planner.domain.catalog import Frozen
from planner.domain.limits import (
    MAX_COUNT,
    MAX_DISK_GB,
    MAX_HORIZON_DAYS,
    MAX_PACKAGES,
    MAX_SEQUENCE_TOKENS,
    MAX_TOKENS,
    at_most,
)
from planner.domain.model_card import ModelCard
from planner.domain.recipes import TrainKnobs, check_recipe, recipe_knobs
from planner.domain.values import (
    PACKAGE_DAYS,
    BillingMode,
    Curve,
    DailyWindow,
    Days,
    Instant,
    Minutes,
    Name,
    Precision,
    Precisions,
    Slug,
    WholeMinutes,
    Window,
    instant_datetime,
)

PositiveInt = Annotated[int, Field(ge=1)]
PositiveFloat = Annotated[float, Field(gt=0)]
Cards = Annotated[int, Field(ge=1), at_most(MAX_COUNT, "cards")]
Tokens = Annotated[int, Field(ge=1), at_most(MAX_SEQUENCE_TOKENS, "tokens")]
# a training sequence predicts each token from those before it: one token has no target
SequenceTokens = Annotated[int, Field(ge=2), at_most(MAX_SEQUENCE_TOKENS, "tokens")]


def _or_exponent_text(schema: dict[str, Any]) -> None:
    """The JSON Schema of a number a file may also write as YAML 1.1 reads `2.0e9`: text."""
    number = {k: v for k, v in schema.items() if k != "title"}
    text = {"type": "string", "pattern": r"^[+]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$"}
    for key in number:
        del schema[key]
    schema["anyOf"] = [number, text]


def _model_ref_tag(value: Any) -> str:
    return "card" if isinstance(value, dict | ModelCard) else "ref"


ModelRef = Annotated[
    Annotated[str, Tag("ref"), Field(min_length=1)] | Annotated[ModelCard, Tag("card")],
    Discriminator(_model_ref_tag),
]
"""A shipped model card's name, a path to a config.json (relative to the scenario), or a card."""


def _after(earlier: str, later: str) -> Any:
    """A field validator: `later` must come after `earlier` when both are given."""

    def check(cls: type, value: Any, info: ValidationInfo) -> Any:
        first = info.data.get(earlier)
        if (
            value is not None
            and first is not None
            and instant_datetime(value) <= instant_datetime(first)
        ):
            raise ValueError(f"{later} {value} is not after {earlier} {first}")
        return value

    return field_validator(later)(classmethod(check))


class _Workload(Frozen):
    name: Name
    # storage billed where the offer prices disk; whole GB keep money exact
    disk_gb: Annotated[int, Field(ge=0), at_most(MAX_DISK_GB, "GB")] = 0
    setup_minutes: WholeMinutes | None = None  # overrides the offer's computed setup time


class Measured(Frozen):
    """A trial run's throughput: `tokens_per_s` is the total over `cards` cards of `card`."""

    card: Slug
    cards: Cards = 1
    tokens_per_s: PositiveFloat


class TrainWorkload(_Workload, TrainKnobs):
    """A fixed amount of work (tokens) in a window: training, fine-tuning or evaluation.

    Knobs (optimizer, zero, checkpointing, …) given here override the recipe's.
    """

    kind: Literal["train"]
    model: ModelRef
    method: Literal["full", "lora", "qlora", "eval"]  # eval: forward passes only
    recipe: Slug | None = None  # a named bundle of training knobs (see `plan fit --help`)
    precision: Precision = "bf16"
    tokens: Annotated[
        float, Field(ge=1, json_schema_extra=_or_exponent_text), at_most(MAX_TOKENS, "tokens")
    ]  # epochs × dataset
    seq_len: SequenceTokens = 2048
    micro_batch: Annotated[int, Field(ge=1), at_most(MAX_COUNT, "sequences")] = 1
    earliest_start: Instant | None = None  # default: the horizon start
    deadline: Instant | None = None  # default: the horizon end
    daily_hours: Window | None = None  # runs, and is billed, only inside this window
    checkpoint_every: Minutes | None = None  # makes the job spot-eligible
    max_cards: Cards | None = None
    measured: Measured | None = None
    after: tuple[Name, ...] = ()

    _deadline_after_start = _after("earliest_start", "deadline")
    _known_recipe = field_validator("recipe")(classmethod(lambda cls, v: check_recipe(v)))

    @property
    def knobs(self) -> TrainKnobs:
        """The knobs in force: the recipe's (or the method's default), then the ones set here."""
        own = TrainKnobs.model_validate(self.model_dump(include=set(TrainKnobs.model_fields)))
        return recipe_knobs(self.method, self.recipe, own)

    @field_validator("checkpoint_every")
    @classmethod
    def _positive_interval(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError("checkpoint interval must be longer than 0 minutes")
        return value

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens(cls, value: Any) -> Any:
        # YAML 1.1 reads 2.0e9 (no exponent sign) as a string; accept it as a number.
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        return value


class Bucket(Frozen):
    """A share of a request class at one length: a class whose lengths vary lists a few."""

    share: Annotated[float, Field(gt=0, le=1)]
    context_tokens: Tokens
    output_tokens: Tokens | None = None


class RequestClass(Frozen):
    """One kind of request of a serve workload: its share of the workload's curve (or a
    curve of its own), its lengths (one, or a few `buckets`) and its latency targets.
    Unset lengths and targets are the workload's."""

    name: Name
    share: Annotated[float, Field(gt=0, le=1)] | None = None
    concurrency: Curve | None = None
    requests_per_s: Curve | None = None
    context_tokens: Tokens | None = None  # prompt + output
    output_tokens: Tokens | None = None
    min_tokens_per_s: PositiveFloat | None = None  # decode speed each request must see
    tpot_ms: PositiveFloat | None = None  # or: time per output token, 1000 ÷ that speed
    ttft_s: PositiveFloat | None = None  # time to first token
    min_replicas: Annotated[int, Field(ge=0), at_most(MAX_COUNT, "replicas")] | None = None
    buckets: list[Bucket] = []  # lengths and their shares of the class, instead of one length

    @model_validator(mode="after")
    def _one_demand_one_speed(self) -> RequestClass:
        demands = [x is not None for x in (self.share, self.concurrency, self.requests_per_s)]
        if sum(demands) != 1:
            raise ValueError(
                f"class {self.name}: give exactly one of share (of the workload's curve), "
                "concurrency or requests_per_s"
            )
        if self.min_tokens_per_s is not None and self.tpot_ms is not None:
            raise ValueError(f"class {self.name}: give min_tokens_per_s or tpot_ms, not both")
        if self.buckets and self.context_tokens is not None:
            raise ValueError(f"class {self.name}: give context_tokens or buckets, not both")
        shares = sum(b.share for b in self.buckets)
        if self.buckets and abs(shares - 1) > 1e-9:
            raise ValueError(f"class {self.name}: its buckets' shares add up to {shares:g}, not 1")
        return self

    @property
    def speed(self) -> float | None:
        """The decode speed each request must see, from min_tokens_per_s or tpot_ms."""
        return self.min_tokens_per_s if self.tpot_ms is None else 1000 / self.tpot_ms


def _lengths_or_classes(schema: dict[str, Any]) -> None:
    """A serve workload's JSON Schema: its context and speed may come from its classes
    instead (`ServeWorkload._defaults_from_classes`), and what classes set is not written."""
    given = ("context_tokens", "min_tokens_per_s")
    schema["required"] = [r for r in schema.get("required", []) if r not in given]
    schema["anyOf"] = [{"required": list(given)}, {"required": ["classes"]}]
    for key in ("demand_share", "class_of"):  # set by request classes, refused in files
        schema["properties"].pop(key, None)


class ServeWorkload(_Workload):
    """A model served from `start` to `end` at a demand given per hour of the week."""

    model_config = ConfigDict(json_schema_extra=_lengths_or_classes)

    kind: Literal["serve"]
    model: ModelRef
    precision: Precisions = ("bf16",)
    kv_precision: Precision | None = None  # default: 16-bit KV cache
    engine: Literal["vllm", "hf"] = "vllm"
    # vLLM's max_num_seqs: the requests a replica runs at once (its default 256); vLLM only
    max_num_seqs: Annotated[int, Field(ge=1), at_most(MAX_COUNT, "sequences")] | None = None
    start: Instant
    end: Instant
    context_tokens: Tokens  # prompt + output per request, held in KV cache
    min_tokens_per_s: PositiveFloat  # decode speed each request must see
    concurrency: Curve | None = None  # requests in flight, by hour (of weekday)
    requests_per_s: Curve | None = None  # alternative: arrivals, by Little's law
    output_tokens: Tokens | None = None  # per request; needed with requests_per_s
    growth_per_month: Annotated[float, Field(gt=-1)] = 0.0  # compounds by calendar month
    month_scale: dict[Annotated[str, Field(pattern=r"^\d{4}-\d{2}$")], PositiveFloat] = {}
    min_replicas: Annotated[int, Field(ge=0), at_most(MAX_COUNT, "replicas")] = 1
    max_cards_per_replica: Cards | None = None
    # a replica config, once started, is held at least this many hours (or until `end`);
    # None (or 0): replicas follow the demand segment by segment
    min_hold_hours: Annotated[int, Field(ge=0), at_most(MAX_HORIZON_DAYS * 24, "hours")] | None = (
        None
    )
    ttft_s: PositiveFloat | None = None  # time to first token each request must see
    # request classes: each planned as a workload of its own, `<name>.<class>`
    classes: list[RequestClass] = []
    # the share of the curve this workload carries (a class's `share`)
    demand_share: Annotated[float, Field(gt=0, le=1)] = 1.0
    class_of: Name | None = None  # the workload whose request class this is

    _end_after_start = _after("start", "end")

    @model_validator(mode="before")
    @classmethod
    def _defaults_from_classes(cls, data: Any) -> Any:
        """With classes, the workload's own lengths and speed are only defaults: where it
        gives none, its classes' longest context, shortest output and slowest speed stand
        in (where every class gives one)."""
        if not isinstance(data, dict) or not isinstance(data.get("classes"), list):
            return data
        classes = [c for c in data["classes"] if isinstance(c, dict)]
        data = dict(data)
        contexts = [
            c.get("context_tokens")
            or max(
                (b.get("context_tokens", 0) for b in c.get("buckets") or [] if isinstance(b, dict)),
                default=None,
            )
            for c in classes
        ]
        known = [x for x in contexts if isinstance(x, int) and x > 0]
        if "context_tokens" not in data and known and len(known) == len(classes):
            data["context_tokens"] = max(known)
        speeds = [
            c.get("min_tokens_per_s") or (1000 / c["tpot_ms"] if c.get("tpot_ms") else None)
            for c in classes
        ]
        given = [x for x in speeds if isinstance(x, int | float)]
        if "min_tokens_per_s" not in data and given and len(given) == len(classes):
            data["min_tokens_per_s"] = min(given)
        # output lengths likewise (requests_per_s needs one): each class's own applies to it
        outputs = [
            c.get("output_tokens")
            or min(
                (
                    b.get("output_tokens") or 0
                    for b in c.get("buckets") or []
                    if isinstance(b, dict)
                ),
                default=None,
            )
            for c in classes
        ]
        lengths = [x for x in outputs if isinstance(x, int) and x > 0]
        if "output_tokens" not in data and lengths and len(lengths) == len(classes):
            data["output_tokens"] = min(lengths)
        if classes and all(c.get("share") is None for c in classes):  # own curves only
            if "concurrency" in data or "requests_per_s" in data:
                raise ValueError(
                    "every class brings its own curve, so the workload's concurrency or "
                    "requests_per_s would serve no one: give classes a share of it, or drop it"
                )
            data["concurrency"] = 0
        return data

    @model_validator(mode="after")
    def _one_demand(self) -> ServeWorkload:
        if (self.concurrency is None) == (self.requests_per_s is None):
            raise ValueError("give exactly one of concurrency or requests_per_s")
        if self.requests_per_s is not None and self.output_tokens is None:
            raise ValueError("requests_per_s needs output_tokens (tokens generated per request)")
        if self.output_tokens is not None and self.output_tokens >= self.context_tokens:
            raise ValueError(
                f"output_tokens ({self.output_tokens}) must be less than context_tokens "
                f"({self.context_tokens}): the context holds the prompt and the output"
            )
        if self.max_num_seqs is not None and self.engine != "vllm":
            raise ValueError(
                f"max_num_seqs is vLLM's; engine {self.engine} has no such limit: drop it"
            )
        return self

    @field_validator("classes")
    @classmethod
    def _classes_hold_together(cls, classes: list[RequestClass]) -> list[RequestClass]:
        """Names and shares over the classes: said at `classes`, where they are written."""
        names = [c.name for c in classes]
        if len(set(names)) < len(names):
            raise ValueError(f"request class names repeat: {', '.join(names)}")
        shares = [c.share for c in classes if c.share is not None]
        if shares and abs(sum(shares) - 1) > 1e-9:
            raise ValueError(f"the classes' shares add up to {sum(shares):g}, not 1")
        return classes

    @model_validator(mode="wrap")
    @classmethod
    def _missing_on_the_class(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        """A length or speed that the workload leaves to its classes, and that some classes
        give but others not, is missing on those others: said at each of them, not at the
        workload (where no class gives it, the workload's own field is the one to add)."""
        try:
            return handler(data)
        except ValidationError as exc:
            raise _blamed_on_classes(exc, data) from None

    def per_class(self) -> list[ServeWorkload]:
        """Each request class as a workload of its own (`<name>.<class>`): the class's
        curve, or this one's times its share; its lengths and targets, else this one's."""
        out = []
        for c in self.classes:
            demand: dict[str, Any] = (
                {}
                if c.share is not None
                else {"concurrency": c.concurrency, "requests_per_s": c.requests_per_s}
            )
            common = {
                "classes": [],
                "class_of": self.name,
                **demand,
                "min_tokens_per_s": c.speed or self.min_tokens_per_s,
                "ttft_s": c.ttft_s or self.ttft_s,
                "min_replicas": self.min_replicas if c.min_replicas is None else c.min_replicas,
            }
            share = c.share or 1.0
            lengths: list[tuple[str, float, int | None, int | None]] = [
                (
                    f"{self.name}.{c.name}.{i + 1}",
                    share * b.share,
                    b.context_tokens,
                    b.output_tokens,
                )
                for i, b in enumerate(c.buckets)
            ] or [(f"{self.name}.{c.name}", share, c.context_tokens, c.output_tokens)]
            for k, (name, part, context, output) in enumerate(lengths):
                update = {
                    **common,
                    # a class's minimum replicas once: on its first bucket
                    **({"min_replicas": 0} if k else {}),
                    "name": name,
                    "demand_share": part,
                    "context_tokens": context or self.context_tokens,
                    "output_tokens": output or self.output_tokens,
                }
                # validated again: a class's lengths must hold together as a workload's do
                out.append(ServeWorkload.model_validate({**self.model_dump(), **update}))
        return out


# a serve workload's fields that its classes may give instead: (field, what else gives it)
_CLASS_GIVEN = {
    "context_tokens": ("context_tokens", "buckets"),
    "min_tokens_per_s": ("min_tokens_per_s", "tpot_ms"),
}


def _blamed_on_classes(exc: ValidationError, data: Any) -> ValidationError:
    """`exc` with a serve workload's missing context_tokens or min_tokens_per_s said at each
    class that lacks it, where other classes give it (docs/scenarios.md, "Request classes")."""
    written = data.get("classes") if isinstance(data, dict) else None
    if not isinstance(written, list):
        return exc
    errors: list[InitErrorDetails] = []
    moved = False
    for err in exc.errors(include_url=False):
        given = _CLASS_GIVEN.get(str(err["loc"][-1])) if len(err["loc"]) == 1 else None
        lacking = [
            i
            for i, c in enumerate(written)
            if isinstance(c, dict) and given and not any(c.get(k) is not None for k in given)
        ]
        if err["type"] == "missing" and given is not None and written and not lacking:
            moved = True  # every class writes it: a bad value there is said at the class
            continue
        if err["type"] != "missing" or given is None or not 0 < len(lacking) < len(written):
            errors.append(_details(err))
            continue
        moved = True
        message = (
            f"required field is missing (or {given[1]}): the workload gives no {given[0]}, "
            "so every class must"
        )
        errors += [
            InitErrorDetails(
                type=PydanticCustomError("missing_in_class", message),
                loc=("classes", i, given[0]),
                input=written[i],
            )
            for i in lacking
        ]
    if not moved or not errors:
        return exc
    return ValidationError.from_exception_data(exc.title, errors)


def _details(err: Any) -> InitErrorDetails:
    """One of pydantic's errors as it is raised again."""
    details = InitErrorDetails(type=err["type"], loc=err["loc"], input=err["input"])
    if "ctx" in err:
        details["ctx"] = err["ctx"]
    return details


class ReserveWorkload(_Workload):
    """Cards held for people (development, notebooks, CI) in given hours and days."""

    kind: Literal["reserve"]
    card: Slug | None = None
    min_memory_gib: PositiveFloat | None = None  # any card with at least this much
    cards: Cards
    hours: Window = DailyWindow(0, 24)
    days: Days = tuple(range(7))
    start: Instant
    end: Instant

    _end_after_start = _after("start", "end")

    @model_validator(mode="after")
    def _one_card_rule(self) -> ReserveWorkload:
        if (self.card is None) == (self.min_memory_gib is None):
            raise ValueError("give exactly one of card or min_memory_gib")
        return self


Workload = Annotated[TrainWorkload | ServeWorkload | ReserveWorkload, Field(discriminator="kind")]


class Commitment(Frozen):
    """A rental the plan must include: an existing contract or a what-if."""

    name: Name | None = None
    offer: Slug
    mode: BillingMode
    units: Annotated[int, Field(ge=1), at_most(MAX_COUNT, "units")]
    start: Instant
    # packages in a row; default: enough to reach the horizon end
    count: Annotated[int, Field(ge=1), at_most(MAX_PACKAGES, "packages")] | None = None
    end: Instant | None = None  # hourly and spot: when it ends; default: the horizon end

    _end_after_start = _after("start", "end")

    @model_validator(mode="after")
    def _shape(self) -> Commitment:
        package = self.mode in PACKAGE_DAYS
        if package and self.end is not None:
            raise ValueError(f"a {self.mode} commitment is sized by count, not end")
        if not package and self.count is not None:
            raise ValueError(f"a {self.mode} commitment is sized by end, not count")
        if package and isinstance(self.start, dt.datetime):
            raise ValueError("packages start at 00:00; give a date")
        return self
