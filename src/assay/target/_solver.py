"""A Python task's solver chain against a model, as a target of the one pipeline.

Each trial gets a fresh TaskState and fresh solver instances. Limits are not errors:
a trial that runs out of messages, tokens, cost or time keeps the state it reached and
is scored on it. An exception from the solver is an ``error`` outcome (the pipeline's
``retry_on_error`` may try it again), and so is a ``ModelError`` (the model refused the
call: a bad request, a wrong key); an InfrastructureError from the model, after the
model's own retries, is an infrastructure failure like any other target's.

A sample with sandboxes (its own, or the task's) gets fresh ones for each attempt before
the solver runs, files placed and setup run (``assay.sandbox._lifecycle``); solvers, tools
and scorers reach them with ``sandbox()``. A failed setup is an ``error`` outcome.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import msgspec

from assay.approval._apply import _policies, approval_scope
from assay.approval._apply import active as approval_active
from assay.dataset import Sample
from assay.errors import AssayError
from assay.model import (
    Budget,
    ChatMessage,
    ContentImage,
    GenerateConfig,
    LimitExceeded,
    Limits,
    Model,
    ModelError,
)
from assay.model._bound import Bound, bind, bind_all, unbind
from assay.model._content import Content, is_url
from assay.model._model import Said
from assay.sandbox import SandboxEnvironment, current_sandboxes, sandbox_scope
from assay.sandbox._context import _current as _sandboxes
from assay.sandbox._lifecycle import SetupFailed, TrialSandboxes, current_trial_sandboxes
from assay.sandbox._spec import SandboxSpec, sandbox_specs
from assay.solver import (
    Chain,
    Target,
    TaskState,
    ToolCalls,
    generate_loop,
)
from assay.solver._solver import is_plain_generate
from assay.solver._state import answer_in_json, text_state
from assay.solver._tool_calls import check_message_limit
from assay.target._base import InfrastructureError, TargetOutcome

STATE_MEDIA = "application/vnd.assay.state+json"


class SolverTarget:
    """``model`` driven by ``plan`` (setup + solver), one fresh chain per trial."""

    def __init__(
        self,
        target_id: str,
        model: Model,
        plan: Chain,
        limits: Limits,
        config: GenerateConfig | None = None,
        *,
        sandboxes: tuple[SandboxSpec, ...] = (),
        files_base: Path | None = None,
        scorers: Sequence[Any] = (),
        approval: Sequence[Any] = (),
        cleanup: Callable[[TaskState], Awaitable[None]] | None = None,
    ) -> None:
        self.id = target_id
        self.model = model
        self.plan = plan
        self.limits = limits
        self.config = config or GenerateConfig()
        self.sandboxes = sandboxes  # the task's; a sample naming its own replaces them
        self.files_base = files_base  # where a sample's file paths are read from
        self.scorers = tuple(scorers)  # the judge of react(attempts=...) (task_scorers)
        self.approval = tuple(approval)  # tool-call approval policies (assay.approval)
        self.cleanup = cleanup  # Task(cleanup=...): after the solvers, sandboxes still open
        self._lean = _lean(self)  # decided once: see _solve_lean
        # what the lean path hands the model: None for a config that sets nothing (the
        # model's own then, as merging an empty one gives, without comparing them)
        self._lean_config = None if self.config == GenerateConfig() else self.config

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Run the solver chain on *sample* and return the final state as the output."""
        value = sample.input  # text, the common case, needs no _as_input
        sample_id = sample.id if sample.id is not None else 0
        if type(value) is str and not sample.choices:  # TaskState(...), made cheaper
            state = text_state(
                self.model.name, sample_id, epoch, value, sample.target, sample.metadata
            )
            unusable = None
        else:
            prompt, unusable = (
                (value, None) if type(value) is str else _as_input(value, self.files_base)
            )
            state = TaskState(
                model=self.model.name,
                sample_id=sample_id,
                epoch=epoch,
                input=prompt,
                target=Target(sample.target),
                choices=sample.choices,
                metadata=sample.metadata,
            )
        if unusable is not None:  # the sample's error, before any model call
            state.completed = True
            data = state.to_json()
            return TargetOutcome("error", data, STATE_MEDIA, failure=unusable)
        holder = [state]  # the latest state, also when a limit or an error cuts it short
        failure = None
        try:
            own = sample.sandbox
            if self._lean and not own and not (_sandboxes_now() or _policies_now()):
                said = await self._solve_lean(holder, epoch)
                return _answered(state, said)
            specs = (own and sandbox_specs(own, f"sample {sample.id}")) or self.sandboxes
            if not specs:  # no exit stack to enter and leave for every trial
                await self._solve(holder, epoch, {})
            else:
                async with AsyncExitStack() as stack:
                    environments = await self._open_sandboxes(sample, specs, stack)
                    await self._solve(holder, epoch, environments)
        except LimitExceeded as exc:
            holder[0].limit = exc.kind
        except (InfrastructureError, AssayError):  # e.g. a local model server that cannot
            raise  # start: the run stops with that one line, it is no sample's error
        except ModelError as exc:  # e.g. "401 from http://...: invalid key"
            failure = f"model error: {exc}"
        except SetupFailed as exc:
            failure = str(exc)
        except Exception as exc:
            failure = f"raised {type(exc).__name__}: {exc}"
        state = holder[0]
        if failure is not None:
            state.completed = True
            return TargetOutcome("error", state.to_json(), STATE_MEDIA, failure=failure)
        return _answered(state)

    async def _open_sandboxes(
        self, sample: Sample, specs: tuple[SandboxSpec, ...], stack: AsyncExitStack
    ) -> dict[str, SandboxEnvironment]:
        """The sample's sandboxes (*specs*) for this attempt. Outside a run (no trial's
        sandboxes to open them in) they are removed when the call ends."""
        sandboxes = current_trial_sandboxes()
        if sandboxes is None:
            sandboxes = TrialSandboxes()
            stack.push_async_callback(sandboxes.close)
        opened = await sandboxes.open(specs, sample.files, sample.setup, self.files_base)
        return dict(opened)

    async def aclose(self) -> None:
        """Close the model's connections (the pipeline calls this when the run ends)."""
        await self.model.aclose()

    async def _solve(
        self, holder: list[TaskState], epoch: int, environments: dict[str, SandboxEnvironment]
    ) -> None:
        """Run the solver chain with the trial's budget, epoch, sandboxes, the task's
        scorers and approval policies in scope, within the time limit if there is one.
        Sandboxes and approval are bound only when the trial has some or some are bound
        already (``sandbox()`` and the approval check read no binding and an empty one
        alike): most trials enter no scope for them."""
        generate = _generate_for(self.model, self.config, self.limits, holder)
        plan = self.plan.fresh()
        # budget_scope, epoch_scope and task_scorers_scope in one binding (model._bound)
        budget = Budget(self.limits)
        token = bind(budget=budget, epoch=epoch, scorers=self.scorers)
        try:
            if environments or self.approval or current_sandboxes() or approval_active():
                with sandbox_scope(environments), approval_scope(self.approval):
                    await self._run_plan(holder, plan, generate)
            elif self.limits.time_limit is None and self.cleanup is None:
                holder[0] = await plan(holder[0], generate)  # _run_plan's, one coroutine less
            else:
                await self._run_plan(holder, plan, generate)
        finally:
            unbind(token)

    async def _solve_lean(self, holder: list[TaskState], epoch: int) -> Said | None:
        """``_solve`` for a plan of one plain ``generate()`` with nothing to bind (see
        ``_lean``), in one frame: what ``Chain``, the ``generate`` step and
        ``generate_loop`` do for a state without tools, the same bindings made around the
        model call (the trial's budget, epoch, state, ``generate`` and the task's scorers:
        one ``Bound``, set once).
        Returns what the model call said, for the state's JSON (``json_answered``)."""
        state = holder[0]
        limits = self.limits
        generate = _generate_for(self.model, self.config, limits, holder)
        # every field of the binding replaced: the five scopes' view, in one set
        bound = bind_all(Bound(Budget(limits), epoch, state, generate, self.scorers))
        try:
            if limits.message_limit is not None:
                check_message_limit(state, limits.message_limit)
            model, config = self.model, self._lean_config  # merged as ``generate`` merges
            merged = model.config if config is None else model.config.merge(config)
            output, said = await model.answer(state.messages, None, merged)
            state.output = output  # nothing runs between the call's record and these two:
            state.messages.append(output.message)  # the state is what it said, and its answer
            return said
        finally:
            unbind(bound)

    async def _run_plan(self, holder: list[TaskState], plan: Chain, generate: Any) -> None:
        """*plan* on ``holder[0]``, its last state left in *holder*; then the task's
        ``cleanup``, its scopes still open."""
        time_limit = self.limits.time_limit
        try:
            if time_limit is None:  # no cancel scope to enter and leave for every trial
                holder[0] = await plan(holder[0], generate)
                return
            try:
                with anyio.fail_after(time_limit):
                    holder[0] = await plan(holder[0], generate)
            except TimeoutError:
                raise LimitExceeded("time", time_limit, time_limit) from None
        finally:
            if self.cleanup is not None:  # Task(cleanup=): after the solvers, scopes open
                await self.cleanup(holder[0])


def _answered(state: TaskState, said: Said | None = None) -> TargetOutcome:
    """The outcome of a trial whose solvers ran to their end (or to a limit); *said*:
    what the lean path's model call encoded, when it ended the state."""
    state.completed = True
    data = state.to_json() if said is None else state.json_answered(said)
    # with its answer text, for the run's judge (which then decodes nothing)
    return TargetOutcome("answered", data, STATE_MEDIA, answer=answer_in_json(state))


def _lean(target: SolverTarget) -> bool:
    """Whether *target*'s trials may take ``_solve_lean``: a plan of one plain
    ``generate()`` (a fresh state has no tools, so one model call is all it does), no
    time limit, cleanup, sandboxes or approval policies. A sample with its own
    sandboxes, or bindings made outside the trial, still take the general
    path. The task's scorers are bound by both (always: binding none where none are
    bound is the same view as not binding)."""
    plain = is_plain_generate(target.plan) and target.limits.time_limit is None
    return plain and not (target.cleanup or target.sandboxes or target.approval)


# Sandboxes or approval policies bound outside the trial send it the general way, which
# binds the trial's own (none) over them for its solvers: ``current_sandboxes`` and
# ``approval.active`` read without a frame around each (asked every trial).
_sandboxes_now = _sandboxes.get
_policies_now = _policies.get


def _generate_for(
    model: Model, task_config: GenerateConfig, limits: Limits, holder: list[TaskState]
) -> Any:
    """The ``generate`` handed to solvers: task config, then the step's own settings;
    the state's tools are run by ``generate_loop`` (which also keeps the message limit).
    It returns ``generate_loop``'s coroutine for the solver to await (no coroutine of
    its own around it: one frame less a model call)."""

    def generate(
        state: TaskState, tool_calls: ToolCalls = "loop", **config: Any
    ) -> Coroutine[Any, Any, TaskState]:
        holder[0] = state
        merged = task_config.merge(GenerateConfig(**config)) if config else task_config
        return generate_loop(state, model, merged, tool_calls, limits.message_limit)

    return generate


def _images_from(message: ChatMessage, base: Path) -> ChatMessage:
    """*message* with each image given by a relative file path made absolute from *base*."""
    if not message.images:
        return message
    assert not isinstance(message.content, str)
    parts: list[Content] = [
        msgspec.structs.replace(p, image=str(base / p.image))
        if isinstance(p, ContentImage) and _relative_file(p.image)
        else p
        for p in message.content
    ]
    return msgspec.structs.replace(message, content=parts)


def _relative_file(image: str) -> bool:
    """True for an image given as a relative file path (not a data: URI or a URL)."""
    given_whole = image.startswith("data:") or is_url(image)
    return not (given_whole or Path(image).expanduser().is_absolute())


def _as_input(value: Any, base: Path | None) -> tuple[str | list[ChatMessage], str | None]:
    """Text, or chat messages (a frozen dataset holds them as plain mappings), images
    given by relative path found from *base* (the dataset's folder, as a sample's files
    are; the working folder without one); with why the sample cannot be asked when its
    input is a list of anything else."""
    if isinstance(value, list):
        base = base or Path.cwd()  # only chat input can name image files
        try:
            return [_images_from(m, base) for m in msgspec.convert(value, list[ChatMessage])], None
        except msgspec.ValidationError as exc:
            why = f"the sample's input is a list but not chat messages ({exc}); give text or"
            return "", f"{why} messages such as [{{'role': 'user', 'content': '...'}}]"
    return (value if isinstance(value, str) else str(value)), None
