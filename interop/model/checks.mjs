// What the scripted model (scripted_model.py) answers, the checks of a streamed answer, and the
// running of the cases, for every A2A SDK's model_client.mjs. No SDK is imported here: each program
// turns its SDK's events into chunks first ({ append, last, artifactId, text }).

const CASE_TIMEOUT_MS = 20_000;

export const emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');

export class CheckFailed extends Error {}

export function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

// Resolves with `promise`, or rejects once `signal` aborts, whichever comes first.
function bounded(promise, signal) {
  const timedOut = new Promise((_, reject) => {
    const onAbort = () => reject(new CheckFailed(`timed out after ${CASE_TIMEOUT_MS} ms`));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, timedOut]);
}

// Runs each case (name: async (signal) => detail) in turn, within its time, and prints its verdict.
export async function runCases(cases) {
  for (const [name, run] of Object.entries(cases)) {
    const signal = AbortSignal.timeout(CASE_TIMEOUT_MS);
    try {
      emit({ case: name, ok: true, detail: await bounded(run(signal), signal) });
    } catch (error) {
      const detail = error instanceof CheckFailed ? error.message : `unexpected ${error.name}: ${error.message}`;
      emit({ case: name, ok: false, detail });
    }
  }
}

// What the scripted model says to `text`, with the conversation's counts.
export const answer = (text, users, answers) =>
  `You said '${text}'; this conversation has ${users} user message(s) and ${answers} answer(s).`;

// Why `chunks` are not the model agent's streamed answer `expected`, or null: pieces (each after the
// first appending) that make the answer, then the last chunk alone, replacing them with the whole
// answer.
export function streamProblem(chunks, expected, { appendChecked = true } = {}) {
  if (chunks.length < 3) return `${chunks.length} artifact update(s), expected the answer in pieces, then whole`;
  const pieces = chunks.slice(0, -1);
  const whole = chunks.at(-1);
  const appends = chunks.map((c) => c.append);
  if (appendChecked && !pieces.slice(1).every((c) => c.append)) return `append flags ${appends}: not true after the first`;
  const lasts = chunks.map((c) => c.last);
  if (!lasts.every((last, i) => last === (i === chunks.length - 1))) return `lastChunk flags ${lasts}: not the last alone`;
  if (appendChecked && whole.append) return 'the last chunk appends rather than replacing the pieces with the whole answer';
  const ids = new Set(chunks.map((c) => c.artifactId));
  if (ids.size !== 1) return `the chunks name ${ids.size} artifacts`;
  const made = pieces.map((c) => c.text).join('');
  if (made !== expected) return `the pieces make "${made}"`;
  if (whole.text !== expected) return `the last chunk holds "${whole.text}"`;
  return null;
}
