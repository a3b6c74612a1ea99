// referee's job pages: plain JavaScript over the JSON routes (no build step, no CDN).
"use strict";

const state = { key: sessionStorage.getItem("referee-key") || "", timer: null };

function headers() {
  return state.key ? { Authorization: `Bearer ${state.key}` } : {};
}

async function getJSON(path) {
  const response = await fetch(path, { headers: headers() });
  const body = await response.json();
  if (!response.ok) {
    throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : response.statusText);
  }
  return body;
}

function cell(row, text, numeric) {
  const td = row.insertCell();
  td.textContent = text;
  if (numeric) td.className = "num";
  return td;
}

function fill(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const values of rows) {
    const row = body.insertRow();
    values.forEach((value, i) => cell(row, value, typeof value === "number" || i > 0 && /^[\d.]+$/.test(value)));
  }
}

function bars(element, counts, labels) {
  const most = Math.max(1, ...counts);
  element.replaceChildren();
  counts.forEach((count, i) => {
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.style.height = `${(100 * count) / most}%`;
    bar.title = `${labels[i]}: ${count}`;
    bar.dataset.count = String(count);
    element.appendChild(bar);
  });
}

function age(seconds) {
  const s = Math.max(0, Date.now() / 1000 - seconds);
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function problem(error) {
  const box = document.getElementById("problem");
  box.hidden = !error;
  box.textContent = error ? String(error.message || error) : "";
}

function view(name) {
  for (const id of ["jobs-view", "job-view", "item-view"]) {
    document.getElementById(id).hidden = id !== name;
  }
}

function link(text, href) {
  const anchor = document.createElement("a");
  anchor.href = href;
  anchor.textContent = text;
  return anchor;
}

function lines(table, id, rows) {
  // rows: [index, ...cells]; the first cell links to the line's item view
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const [index, ...rest] of rows) {
    const row = body.insertRow();
    row.insertCell().appendChild(link(String(index + 1), `#job/${id}/item/${index}`));
    rest.forEach((value) => cell(row, value));
  }
}

async function showItem(id, index) {
  view("item-view");
  const jobLink = document.getElementById("item-job");
  jobLink.href = `#job/${id}`;
  jobLink.textContent = id.slice(0, 12);
  document.getElementById("item-index").textContent = String(Number(index) + 1);
  const line = await getJSON(`/v1/jobs/${id}/items/${index}`);
  document.getElementById("item-request").textContent = JSON.stringify(line.item, null, 2);
  document.getElementById("item-result").textContent =
    line.result === null ? "not scored yet" : JSON.stringify(line.result, null, 2);
}

async function showJobs() {
  view("jobs-view");
  const { jobs } = await getJSON("/v1/jobs");
  const table = document.getElementById("jobs");
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const job of jobs) {
    const row = body.insertRow();
    const link = document.createElement("a");
    link.href = `#job/${job.id}`;
    link.textContent = job.id.slice(0, 12);
    row.insertCell().appendChild(link);
    cell(row, job.state);
    cell(row, `${job.done}/${job.total}`, true);
    cell(row, Object.entries(job.counts || {}).map(([k, v]) => `${k} ${v}`).join(", "));
    cell(row, age(job.created), true);
  }
  document.getElementById("jobs-empty").hidden = jobs.length > 0;
  await showTraffic();
}

async function showTraffic() {
  const traffic = await getJSON("/v1/traffic");
  const statuses = Object.entries(traffic.by_status).map(([k, v]) => `${k} ${v}`).join(", ");
  document.getElementById("traffic-line").textContent =
    `${traffic.items} items · ${traffic.items_per_s.toFixed(2)} items/s${statuses ? " · " + statuses : ""}`;
  const steps = traffic.series.map((_, i) => `${(traffic.series.length - 1 - i) * traffic.step_s} s ago`);
  bars(document.getElementById("traffic-series"), traffic.series, steps);
  fill(document.getElementById("traffic"), Object.entries(traffic.verifiers).map(([name, v]) => [
    name, v.items, v.items_per_s.toFixed(2),
    Object.entries(v.by_status).map(([k, n]) => `${k} ${n}`).join(", "),
    v.p50_ms.toFixed(1), v.p90_ms.toFixed(1), v.p99_ms.toFixed(1),
  ]));
}

const BIN_LABELS = Array.from({ length: 20 }, (_, i) => `${(i / 20).toFixed(2)}-${((i + 1) / 20).toFixed(2)}`);
const RATE_LABELS = Array.from({ length: 21 }, (_, i) => `${(i / 20).toFixed(2)}`);

function rewardCard(name, rewards) {
  const card = document.createElement("div");
  card.className = "card reward";
  card.dataset.verifier = name;
  const title = document.createElement("h3");
  title.textContent = name;
  const line = document.createElement("p");
  const mean = rewards.mean === null ? "-" : rewards.mean.toFixed(3);
  line.textContent = `${rewards.count} ok · mean ${mean} · below 0: ${rewards.below_0} · above 1: ${rewards.above_1}`;
  const chart = document.createElement("div");
  chart.className = "chart";
  bars(chart, rewards.histogram, BIN_LABELS);
  card.append(title, line, chart);
  return card;
}

async function showJob(id) {
  view("job-view");
  document.getElementById("job-id").textContent = id;
  const [job, summary] = await Promise.all([getJSON(`/v1/jobs/${id}`), getJSON(`/v1/jobs/${id}/summary`)]);
  const share = job.total ? job.done / job.total : 1;
  document.getElementById("progress-bar").style.width = `${(100 * share).toFixed(1)}%`;
  const rate = summary.items_per_s ? `${summary.items_per_s.toFixed(1)} items/s` : "";
  const eta = summary.eta_s !== null && summary.eta_s !== undefined ? `ETA ${Math.round(summary.eta_s)} s` : "";
  document.getElementById("job-line").textContent =
    `${job.state} · ${job.done}/${job.total} scored · ${[rate, eta].filter(Boolean).join(" · ")}`;
  fill(document.getElementById("statuses"), Object.entries(summary.by_status));
  fill(document.getElementById("errors"), Object.entries(summary.by_error));
  fill(document.getElementById("flags"), Object.entries(summary.flags));
  const groups = summary.groups;
  const zero = groups.count ? ((100 * groups.zero_variance) / groups.count).toFixed(1) : "0";
  document.getElementById("group-line").textContent =
    `${groups.count} groups · ${zero}% with zero reward variance · pass rates:`;
  bars(document.getElementById("pass-rates"), groups.pass_rate_histogram, RATE_LABELS);
  const rewards = document.getElementById("rewards");
  rewards.replaceChildren(...Object.entries(summary.rewards).map(([name, r]) => rewardCard(name, r)));
  lines(document.getElementById("slowest"), id, summary.slowest.map((s) => [s.index, s.verifier, s.elapsed_ms.toFixed(1)]));
  lines(document.getElementById("flagged"), id, summary.flagged.map((f) => [f.index, f.verifier, f.flags.join(", ")]));
  document.body.dataset.jobState = job.state;
  return job.state;
}

async function route() {
  clearTimeout(state.timer);
  const match = location.hash.match(/^#job\/([0-9a-f]{32})$/);
  const item = location.hash.match(/^#job\/([0-9a-f]{32})\/item\/(\d+)$/);
  try {
    problem(null);
    if (item) {
      await showItem(item[1], item[2]);
    } else if (match) {
      const jobState = await showJob(match[1]);
      if (jobState === "running" || jobState === "uploading") state.timer = setTimeout(route, 1000);
    } else {
      await showJobs();
      state.timer = setTimeout(route, 5000);
    }
  } catch (error) {
    problem(error);
  }
}

document.getElementById("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.key = document.getElementById("key").value;
  sessionStorage.setItem("referee-key", state.key);
  route();
});
window.addEventListener("hashchange", route);
route();
