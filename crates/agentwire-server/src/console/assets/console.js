// The console's only script: it follows live changes and streams a sent message. Everything
// else is plain HTML from the server.
"use strict";

// Follows a list or a timeline: `data-live` replaces the rows on each change, `data-follow` adds
// a row per event of the task's log.
function follow() {
  const rows = document.querySelector("tbody[data-live]");
  if (rows) {
    const status = document.getElementById("live-status");
    const source = new EventSource(rows.dataset.live);
    source.addEventListener("open", () => { if (status) status.textContent = "live"; });
    const count = document.getElementById("task-count");
    source.addEventListener("tasks", (event) => { rows.innerHTML = event.data; });
    source.addEventListener("count", (event) => { if (count) count.textContent = event.data; });
    source.addEventListener("failed", () => { source.close(); if (status) status.textContent = ""; });
    source.addEventListener("error", () => { if (status) status.textContent = ""; });
  }
  const entries = document.querySelector("tbody[data-follow]");
  if (entries) {
    const source = new EventSource(entries.dataset.follow);
    source.addEventListener("entry", (event) => addEntry(entries, event.data));
    // The task ended: the page shows its final state, artifacts and history once read again.
    source.addEventListener("end", () => { source.close(); window.location.reload(); });
    source.addEventListener("failed", () => source.close());
  }
}

// Adds an event's row to `rows`. A text piece appended to the artifact the last row shows joins
// that row, as the page shows it when read again: a streamed answer reads as one text, not a row
// per word.
function addEntry(rows, html) {
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  const row = template.content.firstElementChild;
  const last = rows.lastElementChild;
  const joins = row && last && row.dataset.append === "true" && row.dataset.artifact === last.dataset.artifact;
  const parts = (tr) => tr.querySelectorAll("article.artifact > pre.text, article.artifact > div.data, article.artifact > p.file");
  const piece = joins ? parts(row) : [];
  const before = joins ? parts(last) : [];
  const into = before[before.length - 1];
  if (piece.length === 1 && piece[0].matches("pre.text") && into && into.matches("pre.text")) {
    into.textContent += piece[0].textContent;
    const pieces = Number(last.dataset.pieces || 1) + 1;
    last.dataset.pieces = String(pieces);
    last.cells[2].textContent = `artifact, ${pieces} pieces`;
    return;
  }
  rows.insertAdjacentHTML("beforeend", html);
}

// Reads the file chosen in the form as base64.
function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// Calls `handle(name, data)` for each server-sent event in a fetched response's body.
async function readEvents(response, handle) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) handle(name, data.join("\n"));
    }
  }
}

// Sends the form's message and shows its stream as it comes.
function sendForm() {
  const form = document.getElementById("send");
  if (!form) return;
  const stream = document.getElementById("stream");
  const outcome = document.getElementById("outcome");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    stream.innerHTML = "";
    outcome.textContent = "Sending…";
    try {
      const body = {
        text: form.elements.text.value,
        taskId: form.elements.taskId.value,
        contextId: form.elements.contextId.value,
      };
      const chosen = form.elements.file && form.elements.file.files[0];
      if (chosen) body.file = { name: chosen.name, mediaType: chosen.type, bytes: await readFile(chosen) };
      const response = await fetch(form.action, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        outcome.textContent = "Not sent: " + (await response.text());
        return;
      }
      // Sent: the form is cleared, so that a second click does not send it again.
      form.elements.text.value = "";
      if (form.elements.file) form.elements.file.value = "";
      outcome.textContent = "Streaming…";
      await readEvents(response, (name, data) => {
        if (name === "entry") addEntry(stream, data);
        else if (name === "end") outcome.innerHTML = data;
        else if (name === "failed") outcome.textContent = "The stream failed: " + data;
      });
      if (outcome.textContent === "Streaming…") outcome.textContent = "The stream ended.";
    } catch (error) {
      outcome.textContent = "Not sent: " + error;
    } finally {
      button.disabled = false;
    }
  });
}

follow();
sendForm();
