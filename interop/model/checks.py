"""What the scripted model (scripted_model.py) answers, and the checks of a streamed answer that every
A2A SDK's model_client.py makes on what its SDK read. No SDK is imported here: each program turns its
SDK's events into Chunks first."""

from dataclasses import dataclass


def answer(text: str, users: int, answers: int) -> str:
    """What the scripted model says to `text`, with the conversation's counts."""
    return f"You said '{text}'; this conversation has {users} user message(s) and {answers} answer(s)."


@dataclass(frozen=True)
class Chunk:
    """An artifact-update event as an SDK read it."""

    append: bool
    last: bool
    artifact_id: str
    text: str


def stream_problem(chunks: list[Chunk], expected: str, append_checked: bool = True) -> str | None:
    """Why `chunks` are not the model agent's streamed answer `expected`, or None: pieces (each after
    the first appending) that make the answer, then the last chunk alone, replacing them with the
    whole answer."""
    if len(chunks) < 3:
        return f"{len(chunks)} artifact update(s), expected the answer in pieces, then whole"
    *pieces, whole = chunks
    if append_checked and not all(c.append for c in pieces[1:]):
        return f"append flags {[c.append for c in chunks]}: not true after the first"
    if [c.last for c in chunks] != [False] * len(pieces) + [True]:
        return f"lastChunk flags {[c.last for c in chunks]}: not the last alone"
    if append_checked and whole.append:
        return "the last chunk appends rather than replacing the pieces with the whole answer"
    if len({c.artifact_id for c in chunks}) != 1:
        return f"the chunks name {len({c.artifact_id for c in chunks})} artifacts"
    made = "".join(c.text for c in pieces)
    if made != expected:
        return f"the pieces make {made!r}"
    if whole.text != expected:
        return f"the last chunk holds {whole.text!r}"
    return None
