// Interop client: drives a running agentwire server through A2A v0.3 cases with the official
// JS SDK's last v0.3 release (@a2a-js/sdk 0.3.x) and prints one JSON verdict line per case.
//
//   node client.mjs --url http://127.0.0.1:PORT --binding jsonrpc|rest --token TOKEN
//
// stdout carries only the meta line and the verdicts; logs go to stderr.
// The v0.3 SDK has no tasks/list, so there is no list_paging case. concurrent_generations holds a
// v0.3 SDK stream open while it makes v1.0 calls on the wire (this package pins the v0.3 SDK only).

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  TaskNotCancelableError,
  TaskNotFoundError,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';

const CASE_TIMEOUT_MS = 20_000;
const POLL_INTERVAL_MS = 150;

const BINDINGS = {
  jsonrpc: { protocol: 'JSONRPC', TransportFactory: JsonRpcTransportFactory, sendPath: '/' },
  rest: { protocol: 'HTTP+JSON', TransportFactory: RestTransportFactory, sendPath: '/v1/message:send' },
};

const TERMINAL_STATES = new Set(['completed', 'failed', 'canceled', 'rejected']);
// The JSON-RPC codes of the v0.3 errors (the SDK maps a REST error body's `code` the same way).
const TASK_NOT_FOUND_CODE = -32001;
const TASK_NOT_CANCELABLE_CODE = -32002;

// ---------------------------------------------------------------------------
// Small helpers

const log = (...args) => console.error('[interop-js03]', ...args);
const emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

function installedSdkVersion() {
  // The package does not export its package.json, so locate it next to its entry point.
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk');
  const manifest = join(dirname(entry), '..', 'package.json');
  return JSON.parse(readFileSync(manifest, 'utf8')).version;
}

const textOf = (messageOrArtifact) =>
  (messageOrArtifact?.parts ?? [])
    .filter((part) => part.kind === 'text')
    .map((part) => part.text)
    .join('');

const isTask = (result) => result?.kind === 'task';

function userMessage(text, { messageId = randomUUID(), taskId = undefined, contextId = undefined } = {}) {
  const message = { kind: 'message', messageId, role: 'user', parts: [{ kind: 'text', text }] };
  if (taskId !== undefined) message.taskId = taskId;
  if (contextId !== undefined) message.contextId = contextId;
  return message;
}

function sendParams(message, { blocking = true, pushNotificationConfig = undefined } = {}) {
  const configuration = { blocking };
  if (pushNotificationConfig) configuration.pushNotificationConfig = pushNotificationConfig;
  return { message, configuration };
}

// The state a stream event (task snapshot or status update) carries, if any.
function streamState(event) {
  if (event?.kind === 'task' || event?.kind === 'status-update') return event.status?.state;
  return undefined;
}

function streamTaskId(event) {
  if (event?.kind === 'task') return event.id;
  return event?.taskId;
}

function describeEvent(event) {
  const kind = { task: 'task', 'status-update': 'status', 'artifact-update': 'artifact' }[event?.kind] ?? event?.kind;
  const state = streamState(event);
  return state === undefined ? kind : `${kind}:${state}`;
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function pollTask(client, taskId, isDone, signal) {
  for (;;) {
    const task = await client.getTask({ id: taskId }, { signal });
    if (isDone(task)) return task;
    await sleep(POLL_INTERVAL_MS, undefined, { signal });
  }
}

// Runs `action` and returns the error it raised; fails the check if it did not raise.
async function expectError(action, what) {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new CheckFailed(`${what} succeeded but should have failed`);
}

function errorSummary(error) {
  const code = error.errorResponse?.error?.code;
  const detail = error.message || error.errorResponse?.error?.message || '';
  return `${error.constructor?.name ?? error.name}${code === undefined ? '' : ` (${code})`}: ${detail}`.trim();
}

// JSON-RPC: the SDK's error class and the code of the envelope it keeps; REST: the SDK's error
// class, which it picks from the error body's `code` (HTTP statuses are not kept).
function checkA2AError(error, binding, ErrorClass, code) {
  check(error instanceof ErrorClass, `raised ${errorSummary(error)}, expected ${ErrorClass.name}`);
  if (binding === 'jsonrpc') {
    const got = error.errorResponse?.error?.code;
    check(got === code, `JSON-RPC code ${got}, expected ${code}`);
  }
  return errorSummary(error);
}

// Resolves with `promise`, or rejects once `signal` aborts, whichever comes first.
function bounded(promise, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new CheckFailed(`timed out after ${CASE_TIMEOUT_MS} ms`));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

// A webhook endpoint on loopback that records every POST it receives.
async function startWebhookReceiver() {
  const deliveries = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhook`,
    deliveries,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// A v0.3 push body is the Task itself.
function pushedTask(body) {
  try {
    const task = JSON.parse(body);
    return isTask(task) && task.id && task.status?.state ? task : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Cases. Each returns a short description of what it verified, or throws.

function makeCases({ url, binding, client, newClient, authFetch, requests }) {
  // v1.0 on the wire, for concurrent_generations: the same binding, the v1.0 names and shapes.
  async function v1Call(method, params, [verb, path]) {
    const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
    const base = url.replace(/\/+$/, '');
    if (binding === 'jsonrpc') {
      const body = JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params });
      const response = await authFetch(base + '/', { method: 'POST', headers, body });
      const reply = await response.json();
      check('result' in reply, `v1.0 ${method}: HTTP ${response.status} ${JSON.stringify(reply).slice(0, 400)}`);
      return reply.result;
    }
    const init = { method: verb, headers };
    if (verb === 'POST') init.body = JSON.stringify(params);
    const response = await authFetch(base + path, init);
    const text = await response.text();
    check(response.ok, `v1.0 ${verb} ${path}: HTTP ${response.status} ${text.slice(0, 400)}`);
    return JSON.parse(text);
  }

  const fileOf = (parts) => (parts ?? []).find((part) => part.kind === 'file')?.file;
  // The SDK's REST transport drops a file's name both ways; its JSON-RPC transport keeps it.
  const keepsNames = binding === 'jsonrpc';

  return {
    async card() {
      const card = await new DefaultAgentCardResolver().resolve(url);
      check(card.name, 'card has no name');
      check(card.url, 'card has no url');
      const transports = [card.preferredTransport, ...(card.additionalInterfaces ?? []).map((i) => i.transport)];
      check(transports.includes('JSONRPC'), `no JSONRPC in preferredTransport + additionalInterfaces: ${transports}`);
      check(transports.includes('HTTP+JSON'), `no HTTP+JSON in preferredTransport + additionalInterfaces: ${transports}`);
      check(String(card.protocolVersion).startsWith('0.3'), `protocolVersion is ${card.protocolVersion}`);
      check(card.capabilities?.streaming === true, 'capabilities.streaming is not true');
      check(card.capabilities?.pushNotifications === true, 'capabilities.pushNotifications is not true');
      check(card.supportsAuthenticatedExtendedCard === true, 'supportsAuthenticatedExtendedCard is not true');
      return `"${card.name}", protocolVersion ${card.protocolVersion}, preferred ${card.preferredTransport}, transports ${[...new Set(transports)]}, streaming+push+extended`;
    },

    async send_blocking(signal) {
      requests.length = 0;
      const message = userMessage('hello', { messageId: `tck-complete-task-${randomUUID()}` });
      const task = await client.sendMessage(sendParams(message), { signal });
      const wanted = `POST ${BINDINGS[binding].sendPath}`;
      const first = (requests[0] ?? '').split(' ').slice(0, 2).join(' ');
      check(first === wanted, `send went to ${requests}, not the ${binding} binding`);
      check(isTask(task), `result is not a Task: ${JSON.stringify(task).slice(0, 200)}`);
      check(task.status.state === 'completed', `state ${task.status.state}`);
      const reply = task.status.message;
      check(reply?.role === 'agent', 'status message is missing or not from the agent');
      check(textOf(reply) === 'Hello from TCK', `status text "${textOf(reply)}"`);
      return `completed with agent message "Hello from TCK" via ${wanted}`;
    },

    async send_non_blocking(signal) {
      const first = await client.sendMessage(sendParams(userMessage('tck-long-running'), { blocking: false }), { signal });
      check(isTask(first), 'result is not a Task');
      check(!TERMINAL_STATES.has(first.status.state), `returned already ${first.status.state}`);
      const done = await pollTask(client, first.id, (t) => TERMINAL_STATES.has(t.status.state), signal);
      check(done.status.state === 'completed', `ended ${done.status.state}`);
      const text = textOf(done.status.message);
      check(text === 'Long-running task finished', `final status text "${text}"`);
      return `returned ${first.status.state}, polled to completed`;
    },

    async stream(signal) {
      const message = userMessage('hello', { messageId: `tck-stream-001-${randomUUID()}` });
      const events = await collect(client.sendMessageStream(sendParams(message), { signal }));
      const summary = events.map(describeEvent).join(' > ');
      check(events.length > 0, 'no events');
      const taskIds = new Set(events.map(streamTaskId));
      check(taskIds.size === 1 && !taskIds.has(undefined), `events name task ids ${[...taskIds]}`);

      const artifactAt = events.findIndex((e) => e.kind === 'artifact-update');
      const workingAt = events.findIndex((e) => streamState(e) === 'working');
      const completedAt = events.findIndex((e) => streamState(e) === 'completed');
      check(workingAt >= 0 && artifactAt > workingAt, `artifact does not follow working: ${summary}`);
      check(completedAt > artifactAt, `completed does not follow the artifact: ${summary}`);
      check(completedAt === events.length - 1, `events after completed: ${summary}`);
      check(events.at(-1).kind === 'status-update' && events.at(-1).final === true, `last event is not a final status-update: ${summary}`);
      const artifacts = events.filter((e) => e.kind === 'artifact-update');
      check(artifacts.length === 1, `${artifacts.length} artifact events`);
      const text = textOf(artifacts[0].artifact);
      check(text === 'Stream hello from TCK', `artifact text "${text}"`);
      return summary;
    },

    async get_history_length(signal) {
      const opened = await client.sendMessage(sendParams(userMessage('tck-multi-turn history')), { signal });
      check(opened.status?.state === 'input-required', 'first turn not input-required');
      const followUp = userMessage('more please', { taskId: opened.id, contextId: opened.contextId });
      const second = await client.sendMessage(sendParams(followUp), { signal });
      check(second.status?.state === 'input-required', 'second turn not input-required');

      const full = await client.getTask({ id: opened.id }, { signal });
      const history = full.history ?? [];
      check(history.length >= 3, `full history has only ${history.length} messages`);
      check(history.some((m) => m.messageId === followUp.messageId), 'the follow-up is missing from the history');
      const last = history.at(-1);
      const trimmed = await client.getTask({ id: opened.id, historyLength: 1 }, { signal });
      check(trimmed.history?.length === 1, `historyLength=1 gave ${trimmed.history?.length ?? 0} messages`);
      check(trimmed.history[0].messageId === last.messageId, 'historyLength=1 did not return the last message');
      check(textOf(trimmed.history[0]) === textOf(last), 'last message text differs');
      return `full history ${history.length}, historyLength=1 -> last message`;
    },

    async cancel(signal) {
      const started = await client.sendMessage(sendParams(userMessage('tck-cancel'), { blocking: false }), { signal });
      check(isTask(started), 'result is not a Task');
      check(!TERMINAL_STATES.has(started.status.state), `started ${started.status.state}`);
      const canceled = await client.cancelTask({ id: started.id }, { signal });
      check(canceled.id === started.id, 'cancel returned another task');
      check(canceled.status.state === 'canceled', `cancel returned ${canceled.status.state}`);
      const fetched = await client.getTask({ id: started.id }, { signal });
      check(fetched.status.state === 'canceled', `tasks/get shows ${fetched.status.state}`);
      return 'tasks/cancel -> canceled, tasks/get -> canceled';
    },

    async subscribe(signal) {
      const started = await client.sendMessage(sendParams(userMessage('tck-long-running'), { blocking: false }), { signal });
      check(!TERMINAL_STATES.has(started.status.state), `started ${started.status.state}`);
      // collect() only returns once the server closes the stream.
      const events = await collect(client.resubscribeTask({ id: started.id }, { signal }));
      const summary = events.map(describeEvent).join(' > ');
      check(events.length > 0, 'no events');
      check(events.every((e) => streamTaskId(e) === started.id), `events for other tasks: ${summary}`);
      check(streamState(events.at(-1)) === 'completed', `did not end completed: ${summary}`);
      return `${summary}, stream closed`;
    },

    async multi_turn(signal) {
      const opened = await client.sendMessage(sendParams(userMessage('tck-multi-turn start')), { signal });
      check(opened.status?.state === 'input-required', `first turn ${opened.status?.state}`);
      const reply = userMessage('done', { taskId: opened.id, contextId: opened.contextId });
      const closed = await client.sendMessage(sendParams(reply), { signal });
      check(closed.status?.state === 'completed', `follow-up ${closed.status?.state}`);
      check(closed.id === opened.id, 'follow-up answered on another task');
      check(closed.contextId === opened.contextId, 'follow-up answered in another context');
      return 'input-required -> "done" -> completed on the same task and context';
    },

    async stream_follow_up(signal) {
      const opened = await client.sendMessage(sendParams(userMessage('tck-multi-turn start')), { signal });
      check(opened.status?.state === 'input-required', `first turn ${opened.status?.state}`);
      const reply = userMessage('done', { taskId: opened.id, contextId: opened.contextId });
      const events = await collect(client.sendMessageStream(sendParams(reply), { signal }));
      const summary = events.map(describeEvent).join(' > ');
      check(streamState(events.at(-1)) === 'completed', `the streamed follow-up ended at ${summary}`);
      check(events.every((e) => streamTaskId(e) === opened.id), `events of other tasks: ${summary}`);
      return summary;
    },

    async push_config_crud(signal) {
      // An input-required task stays open, so the server has no reason to refuse the config.
      const task = await client.sendMessage(sendParams(userMessage('tck-multi-turn push-crud')), { signal });
      // In v0.3 the client names the config ("set by the client to support multiple callbacks").
      const wanted = { id: `crud-${randomUUID()}`, url: 'http://127.0.0.1:9/unused', token: 'crud-token' };
      const created = await client.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: wanted }, { signal });
      const config = created.pushNotificationConfig ?? {};
      check(created.taskId === task.id, `created config names task "${created.taskId}"`);
      check(config.id === wanted.id, `created config id "${config.id}", asked for "${wanted.id}"`);
      check(config.url === wanted.url && config.token === wanted.token, `created config differs: ${JSON.stringify(created)}`);

      const ref = { id: task.id, pushNotificationConfigId: wanted.id };
      const fetched = await client.getTaskPushNotificationConfig(ref, { signal });
      check(fetched.pushNotificationConfig?.id === wanted.id && fetched.pushNotificationConfig?.url === wanted.url, `get returned ${JSON.stringify(fetched)}`);
      const listed = await client.listTaskPushNotificationConfig({ id: task.id }, { signal });
      check(listed.some((c) => c.pushNotificationConfig?.id === wanted.id), `list does not show the config: ${JSON.stringify(listed)}`);

      await client.deleteTaskPushNotificationConfig(ref, { signal });
      const afterDelete = await client.listTaskPushNotificationConfig({ id: task.id }, { signal });
      check(!afterDelete.some((c) => c.pushNotificationConfig?.id === wanted.id), 'list still shows the deleted config');
      const error = await expectError(() => client.getTaskPushNotificationConfig(ref, { signal }), 'get after delete');
      return `set/get/list/delete ok; get after delete -> ${errorSummary(error)}`;
    },

    async push_delivery(signal) {
      const receiver = await startWebhookReceiver();
      try {
        const push = { url: receiver.url, token: 'push-token', authentication: { schemes: ['Bearer'], credentials: 'push-secret' } };
        const task = await client.sendMessage(sendParams(userMessage('tck-long-running'), { pushNotificationConfig: push }), { signal });
        check(task.status?.state === 'completed', `task ended ${task.status?.state}`);

        const tasks = () => receiver.deliveries.map((d) => pushedTask(d.body));
        const completed = (t) => t?.status?.state === 'completed';
        while (!tasks().some(completed)) await sleep(POLL_INTERVAL_MS, undefined, { signal });
        await sleep(300, undefined, { signal }); // let any straggler arrive before judging the order

        const delivered = tasks();
        const bad = delivered.findIndex((t) => t === undefined);
        check(bad < 0, `a delivery is not a v0.3 Task: ${receiver.deliveries[bad]?.body.slice(0, 300)}`);
        for (const { headers } of receiver.deliveries) {
          check(headers['x-a2a-notification-token'] === 'push-token', `token header "${headers['x-a2a-notification-token']}"`);
          check(headers.authorization === 'Bearer push-secret', `Authorization header "${headers.authorization}"`);
        }
        const seen = delivered.map((t) => t.status.state).join(' > ');
        check(delivered.every((t) => t.id === task.id), `deliveries for other tasks: ${seen}`);
        check(completed(delivered.at(-1)), `last delivery is not completed: ${seen}`);
        return `${delivered.length} deliveries (${seen}) as v0.3 Tasks, token and Authorization right`;
      } finally {
        await receiver.close();
      }
    },

    async extended_card(signal) {
      // Fresh clients: the SDK keeps the card it fetched. getAgentCard() fetches the extended card
      // (agent/getAuthenticatedExtendedCard or GET /v1/card) because the card says it exists.
      const extended = await (await newClient(true)).getAgentCard({ signal });
      const skills = extended.skills.map((s) => s.id);
      check(skills.includes('extended'), `extended card skills: ${skills}`);
      const publicCard = await new DefaultAgentCardResolver().resolve(url);
      check(!publicCard.skills.some((s) => s.id === 'extended'), 'public card already has the extended skill');
      check(extended.skills.length === publicCard.skills.length + 1, 'extended card should have exactly one more skill');

      requests.length = 0;
      const refusal = await expectError(async () => (await newClient(false)).getAgentCard({ signal }), 'extended card without credentials');
      // The SDK does not keep the HTTP status of a refusal: read it from the wire.
      const status = requests.at(-1);
      check(status?.endsWith(' 401'), `refused with ${status} (${errorSummary(refusal)}), not HTTP 401`);
      return `extended skill present; without credentials -> ${status}`;
    },

    async error_unknown_task(signal) {
      const error = await expectError(() => client.getTask({ id: randomUUID() }, { signal }), 'tasks/get of a random id');
      return checkA2AError(error, binding, TaskNotFoundError, TASK_NOT_FOUND_CODE);
    },

    async error_cancel_finished(signal) {
      const message = userMessage('hello', { messageId: `tck-complete-task-${randomUUID()}` });
      const task = await client.sendMessage(sendParams(message), { signal });
      check(task.status?.state === 'completed', 'setup task did not complete');
      const error = await expectError(() => client.cancelTask({ id: task.id }, { signal }), 'cancel of a completed task');
      return checkA2AError(error, binding, TaskNotCancelableError, TASK_NOT_CANCELABLE_CODE);
    },

    async send_file(signal) {
      const hello = { bytes: 'aGVsbG8=', name: 'hello.txt', mimeType: 'text/plain' };
      const message = { ...userMessage('', { messageId: `tck-complete-task-${randomUUID()}` }), parts: [{ kind: 'file', file: hello }] };
      const task = await client.sendMessage(sendParams(message), { signal });
      check(task.status?.state === 'completed', `state ${task.status?.state}`);
      const fetched = await client.getTask({ id: task.id }, { signal });
      const got = fileOf(fetched.history?.[0]?.parts);
      check(got?.bytes === hello.bytes, `tasks/get gives back the bytes as ${JSON.stringify(got)}`);
      check(!keepsNames || got?.name === hello.name, `tasks/get gives back the name as ${got?.name}`);
      // The same task read through v1.0: the file itself, base64 once, with its name.
      const seen = await v1Call('GetTask', { id: task.id }, ['GET', `/tasks/${task.id}`]);
      const part = seen.history?.[0]?.parts?.[0] ?? {};
      check(part.raw === 'aGVsbG8=', `v1.0 GetTask shows the file as ${JSON.stringify(part).slice(0, 200)}`);
      check(!keepsNames || part.filename === hello.name, `v1.0 GetTask shows the name as ${part.filename}`);
      return `hello${keepsNames ? '.txt' : ' (the REST transport sends no name)'} came back the same through tasks/get and as raw 'aGVsbG8=' through v1.0 GetTask`;
    },

    async receive_file(signal) {
      const message = userMessage('a file please', { messageId: `tck-artifact-file-${randomUUID()}` });
      const task = await client.sendMessage(sendParams(message), { signal });
      check(task.status?.state === 'completed', `state ${task.status?.state}`);
      const got = fileOf(task.artifacts?.[0]?.parts);
      check(got?.bytes === 'R2VuZXJhdGVkIGZpbGUgY29udGVudA==', `the artifact's file is ${JSON.stringify(got)}`);
      check(got?.mimeType === 'text/plain', `the artifact's file has media type ${got?.mimeType}`);
      check(!keepsNames || got?.name === 'output.txt', `the artifact's file is named ${got?.name}`);
      return "artifact output.txt (text/plain) holds base64 of 'Generated file content'";
    },

    async send_default_blocking(signal) {
      // The SDK's Client always states `blocking`; its transport sends the parameters as given.
      requests.length = 0;
      const task = await client.transport.sendMessage({ message: userMessage('tck-long-running default') }, { signal });
      check(requests.length === 1, `expected one request, saw ${requests}`);
      check(isTask(task), `result is not a Task: ${JSON.stringify(task).slice(0, 200)}`);
      check(task.status.state === 'completed', `a send without blocking answered ${task.status.state}`);
      return 'a send without a configuration waited for the task to complete';
    },

    async concurrent_generations(signal) {
      // A v0.3 stream of a task that works for about a second...
      const stream = client.sendMessageStream(sendParams(userMessage('tck-long-running concurrent')), { signal });
      try {
        const first = await stream.next();
        check(!first.done, 'the v0.3 stream ended at once');
        const v03TaskId = streamTaskId(first.value);
        const labels = [describeEvent(first.value)];

        // ... and, while it is open, a v1.0 exchange with the same server over the same binding.
        const v1Message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] };
        const sent = await v1Call('SendMessage', { message: v1Message }, ['POST', '/message:send']);
        check(sent.task?.status?.state === 'TASK_STATE_COMPLETED', `v1.0 SendMessage answered ${JSON.stringify(sent).slice(0, 300)}`);
        // The v0.3 task, read through v1.0 while its v0.3 stream is still open: one store, two dialects.
        const seen = await v1Call('GetTask', { id: v03TaskId }, ['GET', `/tasks/${v03TaskId}`]);
        const seenState = seen.status?.state;
        check(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(seenState), `v1.0 GetTask of the v0.3 task: ${seenState}`);

        for (let next = await stream.next(); !next.done; next = await stream.next()) labels.push(describeEvent(next.value));
        check(labels.at(-1) === 'status:completed', `v0.3 stream after the v1.0 calls: ${labels.join(' > ')}`);
        return `v0.3 message/stream ${labels.join(' > ')}; meanwhile v1.0 SendMessage -> TASK_STATE_COMPLETED and v1.0 GetTask of the v0.3 task -> ${seenState}`;
      } finally {
        await stream.return(undefined);
      }
    },
  };
}

// ---------------------------------------------------------------------------

// Wraps fetch to log "METHOD /path STATUS" of every request, to see the binding and the statuses
// that the SDK does not keep.
function recordingFetch(fetchImpl, requests) {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const response = await fetchImpl(input, init);
    requests.push(`${method} ${url.pathname} ${response.status}`);
    return response;
  };
}

function bearerFetch(token, fetchImpl) {
  return createAuthenticatingFetchWithRetry(fetchImpl, {
    headers: async () => ({ Authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: async () => undefined, // a static token: nothing to refresh
  });
}

async function createClient(url, binding, fetchImpl) {
  const { protocol, TransportFactory } = BINDINGS[binding];
  // Offering a single transport forces the binding: the factory fails instead of falling back.
  const factory = new ClientFactory({
    transports: [new TransportFactory({ fetchImpl })],
    preferredTransports: [protocol],
  });
  return factory.createFromUrl(url);
}

async function main() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      binding: { type: 'string' },
      token: { type: 'string' },
    },
  });
  const { url, binding, token } = values;
  if (!url || !BINDINGS[binding] || !token) {
    throw new Error('usage: node client.mjs --url URL --binding jsonrpc|rest --token TOKEN');
  }

  emit({ meta: { sdk: '@a2a-js/sdk', version: installedSdkVersion(), binding } });

  const requests = [];
  const authFetch = bearerFetch(token, recordingFetch(fetch, requests));
  const anonymousFetch = recordingFetch(fetch, requests);
  const newClient = (authenticated) => createClient(url, binding, authenticated ? authFetch : anonymousFetch);
  const client = await newClient(true);
  log(`using the ${BINDINGS[binding].protocol} transport against ${url}`);

  const cases = makeCases({ url, binding, client, newClient, authFetch, requests });
  for (const [name, run] of Object.entries(cases)) {
    const signal = AbortSignal.timeout(CASE_TIMEOUT_MS);
    const started = Date.now();
    try {
      const detail = await bounded(run(signal), signal);
      emit({ case: name, ok: true, detail });
    } catch (error) {
      const detail = error instanceof CheckFailed ? error.message : `unexpected ${errorSummary(error)}`;
      emit({ case: name, ok: false, detail });
    }
    log(`${name} done in ${Date.now() - started} ms`);
  }
}

main().catch((error) => {
  log('harness failure:', error);
  process.exit(2);
});
