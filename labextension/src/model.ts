/**
 * Transcript model: wire messages -> display blocks.
 *
 * A faithful TypeScript re-implementation of penguin_jupyter/notebook/transcript/transcript_model.py
 * (build_blocks, tool_card_summary, call_body, diff_preview, split_edit_cell_output), of
 * visible_text.visible_controls (a card shows invisible characters as ⟨U+XXXX⟩) and of the tolerant bundle reader
 * (transcript_bundle.read_bundle). Same block order, same grouping: tool outputs and approval
 * decisions join their call by tool_call_id within one origin; origin-tagged messages go into
 * nested subagent groups placed where the subagent first appeared. How each card reads comes
 * from the bundle's `tools` (each tool's card roles, written from its declaration); no rule here
 * names a tool. Keep the two in step.
 */

export type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export const BUNDLE_VERSION = 1;
export const STOP_REASONS = ['completed', 'failed', 'aborted', 'timeout', 'malformed', 'auth'];
const MAX_TURNS_NOTICE = /^\[reached max turns \((-?\d+)\); stopping\]$/;
const BUDGET_STOP_NOTICE = /^\[stopped before a model request: ([\s\S]+)\]$/; // the engine's budget stop (docs/cost.md)
const DETAIL_LIMIT = 200;
const SILENT_EVENTS = new Set(['request_begin', 'token_usage', 'tool_list_ready', 'subagent', 'goal_finished']);

/** How a card of one tool reads (its declaration's card roles, as the bundle carries them). */
export interface CardRoles {
  command?: string; // the shell command: `$ cmd`, in full
  workdir?: string; // where it runs
  body?: string; // the argument shown in full ('*': every argument, for a tool nobody declared)
  cell?: string; // the cell the call acts on (`cell 3f2a…`)
  diff?: { old?: string; new: string; path?: string; notes?: CardNotes }; // what the call writes, as a diff
  headline?: string[]; // the header's arguments, joined by ': '
  notes?: CardNotes; // flags that add their text to the header
}
export type CardNotes = { [argument: string]: string }; // a flag argument, when true, adds its text
export type ToolCards = { [name: string]: CardRoles };
const UNDECLARED_CARD: CardRoles = { body: '*' };

// FALLBACK ONLY for bundles saved before bundles carried their tools' card roles: the roles the
// tools had then, frozen. Never edit it to follow a declaration, never read it for a bundle that
// has `tools`. Same table as penguin_jupyter/notebook/transcript/legacy_card_roles.py (a test
// keeps the two equal).
export const LEGACY_CARD_ROLES: ToolCards = {
  read_file: { headline: ['file_path'] },
  edit_file: {
    diff: {
      old: 'old_string',
      new: 'new_string',
      path: 'file_path',
      notes: { replace_all: '(replace_all: every occurrence)' }
    },
    headline: ['file_path']
  },
  write_file: { diff: { new: 'content', path: 'file_path' }, headline: ['file_path'] },
  exec_command: { command: 'cmd', workdir: 'workdir', notes: { run_in_background: ' [background]' } },
  input_command: { body: 'chars', headline: ['process_id', 'chars'] },
  kill_command: { headline: ['process_id'] },
  run_subagent: { body: 'prompt', headline: ['prompt'] },
  input_subagent: { body: 'prompt', headline: ['subagent_id', 'prompt'] },
  kill_subagent: { headline: ['subagent_id'] },
  read_image: { headline: ['source'] },
  describe_image: { headline: ['source', 'prompt'] },
  run_python: { body: 'code' },
  inspect_variables: {},
  propose_cell: { body: 'code' },
  read_notebook: {},
  insert_cell: { body: 'source', headline: ['source'] },
  edit_cell: { cell: 'cell_id', diff: { new: 'source' }, headline: ['source'] },
  run_cell: { cell: 'cell_id', headline: ['cell_id'] },
  delete_cell: { cell: 'cell_id', headline: ['cell_id'] }
};
// Control (but newline and tab), format (zero-width, bidi, BOM, tags) and separator characters.
const HIDDEN_CHARACTER = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `text` with each invisible or reordering character written as ⟨U+XXXX⟩. */
export function visibleControls(text: string): string {
  return text.replace(HIDDEN_CHARACTER, char =>
    `⟨U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

function visibleOrNull(text: string | null): string | null {
  return text === null ? null : visibleControls(text);
}

export interface TokenCounts {
  cache_read: number;
  cache_write: number;
  output: number;
  total: number;
}

export interface TaskCost {
  task_usd: number;
  session_usd: number;
  unpriced_requests: number;
}

export interface UndoState {
  task_id: string;
  state: 'available' | 'blocked' | 'undone';
  note: string;
}

export interface Bundle {
  version: number;
  session: { [key: string]: string };
  status: string;
  usage: { session: TokenCounts; request: TokenCounts; cost?: TaskCost } | null;
  messages: Json[];
  tools: ToolCards; // each tool's card roles (the legacy ones for a bundle saved without)
  undo?: UndoState; // only when the bundle has one (as the Python reader)
}

/** The bundle's optional undo entry (docs/undo.md "The Undo button"), strings only. */
function undoState(value: Json): UndoState | null {
  if (!isObject(value) || !['available', 'blocked', 'undone'].includes(value.state)) {
    return null;
  }
  return {
    task_id: String(value.task_id ?? ''),
    state: value.state,
    note: String(value.note ?? '')
  };
}

export interface TextBlock {
  kind: 'text';
  role: string;
  text: string;
  stop_reason: string;
  sender: string | null;
}

export interface ThinkingBlock {
  kind: 'thinking';
  thinking: string;
  stop_reason: string;
}

export interface ImageBlock {
  kind: 'image';
  source: string;
  mime_type: string | null;
}

export interface ToolCard {
  kind: 'tool';
  tool_call_id: string;
  name: string;
  arguments: string;
  call_stop_reason: string | null;
  title: string;
  detail: string;
  description: string | null;
  command: string | null;
  workdir: string | null;
  body: string | null; // the whole text its card shows (the argument its roles name, or all of them)
  diff: string | null;
  decision: string | null;
  decision_reason: string | null; // why no click was needed: a rule, the policy, the mode
  output: string | null;
  images: string[];
  output_stop_reason: string | null;
  has_call: boolean;
}

export interface EventBlock {
  kind: 'event';
  event: string;
  text: string;
  status: string | null;
  details: { [key: string]: Json };
}

export interface SubagentGroup {
  kind: 'subagent';
  session_id: string;
  provider: string | null;
  model_id: string | null;
  blocks: Block[];
}

export type Block = TextBlock | ThinkingBlock | ImageBlock | ToolCard | EventBlock | SubagentGroup;

// --- tolerant bundle reader ----------------------------------------------------------------

function isObject(value: Json): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function messageDict(message: Json): Json | null {
  let data = message;
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      return null;
    }
  }
  if (!isObject(data) || !isObject(data.payload)) {
    return null;
  }
  if (String(data.payload.type ?? '').startsWith('partial_')) {
    return null;
  }
  return data;
}

function taskCost(value: Json): TaskCost | null {
  if (!isObject(value)) {
    return null;
  }
  const usd = (v: Json) => typeof v === 'number' && isFinite(v) && v >= 0;
  if (!usd(value.task_usd) || !usd(value.session_usd)) {
    return null;
  }
  const unpriced = value.unpriced_requests;
  return {
    task_usd: value.task_usd,
    session_usd: value.session_usd,
    unpriced_requests: typeof unpriced === 'number' && Number.isInteger(unpriced) && unpriced >= 0 ? unpriced : 0
  };
}

// A long user message folds after its head (transcript/long_prompts.py `fold`; keep in step).
export const FOLD_HEAD_LINES = 12;
export const FOLD_HEAD_CHARS = 1500;

export interface Folded {
  head: string;
  rest: string; // empty: nothing folded
  label: string; // `… 40 more lines`, or `… 98,500 more characters` for one long line
}

/** As long_prompts.fold: the first FOLD_HEAD_LINES lines (at most FOLD_HEAD_CHARS characters,
 * counted as Python counts them) and the rest. */
export function foldText(text: string): Folded {
  const chars = Array.from(text);
  let head = Array.from(text.split('\n').slice(0, FOLD_HEAD_LINES).join('\n'));
  if (head.length > FOLD_HEAD_CHARS) {
    head = head.slice(0, FOLD_HEAD_CHARS);
  }
  if (head.length >= chars.length) {
    return { head: text, rest: '', label: '' };
  }
  let rest = chars.slice(head.length);
  if (rest[0] === '\n') {
    rest = rest.slice(1);
  }
  const restText = rest.join('');
  const lines = restText.split('\n').length;
  const label = lines > 1 ? `… ${lines} more lines` : `… ${rest.length.toLocaleString('en-US')} more characters`;
  return { head: head.join(''), rest: restText, label };
}

/** As prices.format_usd: under a dollar up to four decimals (trailing zeros dropped to two). */
export function formatUsd(amount: number): string {
  if (amount > 0 && amount < 0.0001) {
    return '<$0.0001';
  }
  if (amount !== 0 && Math.abs(amount) < 1) {
    let text = amount.toFixed(4);
    while (text.endsWith('0') && text.split('.')[1].length > 2) {
      text = text.slice(0, -1);
    }
    return `$${text}`;
  }
  return '$' + amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/** As transcript/cost_line.cost_text: "price unknown" for a Task whose requests have no price. */
export function costText(cost: TaskCost | null | undefined): string {
  if (!cost) {
    return '';
  }
  if (cost.unpriced_requests && !cost.task_usd) {
    return 'cost: price unknown';
  }
  let text = `cost: ${formatUsd(cost.task_usd)} this Task · ${formatUsd(cost.session_usd)} session`;
  if (cost.unpriced_requests) {
    const n = cost.unpriced_requests;
    text += ` (+${n} request${n !== 1 ? 's' : ''} of unknown price)`;
  }
  return text;
}

function tokenCounts(value: Json): TokenCounts {
  const source = isObject(value) ? value : {};
  const num = (v: Json) => (typeof v === 'number' && isFinite(v) ? Math.trunc(v) : 0);
  return {
    cache_read: num(source.cache_read),
    cache_write: num(source.cache_write),
    output: num(source.output),
    total: num(source.total)
  };
}

// A tool output's image is saved once, in the text/html fallback; the JSON names it
// `penguin:html-image:N`, the N-th inline raster of that HTML (saved_images.py
// `with_saved_images`, docs/notebook-runtime.md "Saved size").
export const SAVED_IMAGE_REF = 'penguin:html-image:';
const HTML_IMAGE = /<img src="(data:image\/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=]+)"/gi;

/** The inline rasters of a transcript's text/html (a string or nbformat's lines), in order. */
export function htmlImages(markup: Json): string[] {
  const text = Array.isArray(markup) ? markup.filter(p => typeof p === 'string').join('') : markup;
  if (typeof text !== 'string') {
    return [];
  }
  // base64 and `data:image/…;base64,` hold nothing HTML-escaped, so the match is the source
  return Array.from(text.matchAll(HTML_IMAGE), m => m[1]);
}

/** A saved bundle with its image references replaced by the rasters of its text/html (data);
 * a reference without its image is left out. Anything else comes back as it is. */
export function withSavedImages(bundle: Json, markup: Json): Json {
  if (!bundle || typeof bundle !== 'object' || !Array.isArray(bundle.messages)) {
    return bundle;
  }
  const images = htmlImages(markup);
  const messages = bundle.messages.map((message: Json) => {
    const payload = message && typeof message === 'object' ? message.payload : null;
    if (!payload || payload.type !== 'tool_call_output' || !Array.isArray(payload.images) || !payload.images.length) {
      return message;
    }
    const kept = payload.images
      .map((value: Json) => {
        if (typeof value !== 'string' || !value.startsWith(SAVED_IMAGE_REF)) {
          return value;
        }
        const number = value.slice(SAVED_IMAGE_REF.length);
        return /^[0-9]+$/.test(number) && Number(number) < images.length ? images[Number(number)] : null;
      })
      .filter((value: Json) => value !== null);
    return { ...message, payload: { ...payload, images: kept } };
  });
  return { ...bundle, messages };
}

const CARD_ROLE_TEXTS = ['command', 'workdir', 'body', 'cell'] as const;
const MAX_TOOLS = 1000;

/** One tool's card roles as a bundle keeps them (a stranger's bundle is data: anything but the
 * known keys with the expected shapes is dropped), as transcript_bundle.card_roles. */
export function cardRoles(value: Json): CardRoles {
  if (!isObject(value)) {
    return { ...UNDECLARED_CARD };
  }
  const roles: CardRoles = {};
  for (const key of CARD_ROLE_TEXTS) {
    if (typeof value[key] === 'string') {
      roles[key] = value[key];
    }
  }
  const diff = value.diff;
  if (isObject(diff) && typeof diff.new === 'string') {
    const kept: Json = {};
    for (const key of ['old', 'new', 'path']) {
      if (typeof diff[key] === 'string') {
        kept[key] = diff[key];
      }
    }
    if (isObject(diff.notes)) {
      kept.notes = cardNotes(diff.notes);
    }
    roles.diff = kept as CardRoles['diff'];
  }
  if (Array.isArray(value.headline)) {
    roles.headline = value.headline.filter((key: Json) => typeof key === 'string');
  }
  if (isObject(value.notes)) {
    roles.notes = cardNotes(value.notes);
  }
  return roles;
}

function cardNotes(value: Json): CardNotes {
  const notes: CardNotes = {};
  for (const [argument, text] of Object.entries(value)) {
    if (typeof text === 'string') {
      notes[argument] = text;
    }
  }
  return notes;
}

/** A bundle's `tools` as a reader uses them; one saved before they were carried reads with the
 * frozen legacy roles. */
export function savedTools(value: Json): ToolCards {
  if (!isObject(value)) {
    return JSON.parse(JSON.stringify(LEGACY_CARD_ROLES));
  }
  const tools: ToolCards = {};
  for (const [name, roles] of Object.entries(value).slice(0, MAX_TOOLS)) {
    tools[String(name)] = cardRoles(roles);
  }
  return tools;
}

/** Any bundle of version <= current (and best effort newer ones) in the v1 shape. */
export function readBundle(data: Json): Bundle {
  if (typeof data === 'string') {
    data = JSON.parse(data);
  }
  if (!isObject(data)) {
    throw new Error('transcript bundle must be a JSON object');
  }
  const session: { [key: string]: string } = {};
  if (isObject(data.session)) {
    // A saved header names no local path (docs/notebook-runtime.md "Saved size"): older bundles'
    // workspace and trace_path are read past, as the Python reader does.
    for (const key of ['session_id', 'provider', 'model_id', 'approval_mode']) {
      const value = data.session[key];
      if (value !== undefined && value !== null) {
        session[key] = String(value);
      }
    }
  }
  let usage: Bundle['usage'] = null;
  if (isObject(data.usage)) {
    usage = { session: tokenCounts(data.usage.session), request: tokenCounts(data.usage.request) };
    const cost = taskCost(data.usage.cost);
    if (cost) {
      usage.cost = cost;
    }
  }
  const messages = (Array.isArray(data.messages) ? data.messages : [])
    .map(messageDict)
    .filter((m: Json) => m !== null);
  const bundle: Bundle = {
    version: typeof data.version === 'number' ? data.version : 0,
    session,
    status: STOP_REASONS.includes(data.status) ? data.status : 'completed',
    usage,
    messages,
    tools: savedTools(data.tools)
  };
  const undo = undoState(data.undo);
  if (undo) {
    bundle.undo = undo;
  }
  return bundle;
}

// --- small helpers (same as the Python ones) ------------------------------------------------

export function parseArguments(args: Json): { [key: string]: Json } | null {
  if (isObject(args)) {
    return args;
  }
  if (typeof args !== 'string') {
    return null;
  }
  try {
    const value = JSON.parse(args);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function stringArg(args: Json, key: string): string | null {
  const value = (args ?? {})[key];
  return typeof value === 'string' ? value : null;
}

/** How a card of tool `name` reads, from a bundle's `tools` (a tool nobody declared: every argument). */
export function rolesOf(name: string, tools: ToolCards): CardRoles {
  const roles = Object.prototype.hasOwnProperty.call(tools, name) ? tools[name] : undefined;
  return roles !== undefined && isObject(roles) ? roles : UNDECLARED_CARD;
}

/** Every argument but the description, one `name: value` per line (strings as they are): what a
 * card of a tool nobody declared shows. */
export function allArgumentsText(args: { [key: string]: Json }): string | null {
  const lines = Object.entries(args)
    .filter(([key]) => key !== 'description')
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : compactJson(value)}`);
  return lines.length ? lines.join('\n') : null;
}

function notesOf(notes: CardNotes | undefined, args: Json): string[] {
  return isObject(notes)
    ? Object.entries(notes!).filter(([argument]) => (args ?? {})[argument] === true).map(([, text]) => String(text))
    : [];
}

function roleKey(roles: CardRoles, role: 'command' | 'workdir' | 'body' | 'cell'): string | null {
  const value = roles[role];
  return typeof value === 'string' && value ? value : null;
}

// Python's str.split() whitespace (JS's \s differs: it has U+FEFF, lacks U+001C–U+001F and U+0085).
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

function shorten(text: string, limit = DETAIL_LIMIT): string {
  text = text.includes('\n') ? text.split('\n', 1)[0] + ' …' : text.split(PY_WHITESPACE).filter(Boolean).join(' ');
  return [...text].length <= limit ? text : [...text].slice(0, limit - 1).join('') + '…';
}

/** Python-compatible compact JSON (json.dumps with ensure_ascii=False, separators=(",", ":")). */
function compactJson(value: Json): string {
  return JSON.stringify(value);
}

export function toolDescription(args: Json): string | null {
  const value = stringArg(parseArguments(args), 'description');
  return value === null ? null : value.trim() || null;
}

/** [title, detail] for a card header: the tool name and, on one line, its command (`$ cmd (in
 * dir)`), else its headline arguments joined by ': ' (a cell as `cell 3f2a…`), else every argument
 * but the description as compact JSON. */
export function toolCardSummary(payload: Json, roles: CardRoles): [string, string] {
  const name = String(payload.name || 'tool');
  const raw = payload.arguments ?? '';
  const args = parseArguments(raw);
  if (args === null) {
    return [name, shorten(typeof raw === 'string' ? raw : compactJson(raw))];
  }
  const command = roleKey(roles, 'command');
  if (command !== null) {
    let detail = '$ ' + (stringArg(args, command) ?? '');
    const workdirKey = roleKey(roles, 'workdir');
    const workdir = workdirKey ? stringArg(args, workdirKey) : null;
    if (workdir) {
      detail += ` (in ${workdir})`;
    }
    return [name, shorten(detail + notesOf(roles.notes, args).join(''))];
  }
  const cell = roleKey(roles, 'cell');
  const values: string[] = [];
  for (const key of roles.headline ?? []) {
    const value = typeof key === 'string' ? stringArg(args, key) : null;
    if (value) {
      values.push(key === cell ? `cell ${value}` : value);
    }
  }
  if (values.length) {
    return [name, shorten(values.join(': ') + notesOf(roles.notes, args).join(''))];
  }
  const shown: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(args)) {
    if (key !== 'description') {
      shown[key] = value;
    }
  }
  return [name, Object.keys(shown).length ? shorten(compactJson(shown)) : ''];
}

/** The whole text that says what the call does: the argument its roles name as its command or
 * body, every argument for a tool nobody declared; null when its roles name none. */
export function callBody(args: Json, roles: CardRoles): string | null {
  const key = roleKey(roles, 'command') ?? roleKey(roles, 'body');
  if (key === null) {
    return null;
  }
  const parsed = parseArguments(args);
  if (key === '*') {
    return parsed === null ? null : allArgumentsText(parsed);
  }
  return stringArg(parsed, key);
}

function splitLines(text: string): string[] {
  // Python str.splitlines() for the common separators: no trailing empty line.
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length && lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

type Op = ['equal' | 'delete' | 'insert', number, number, number, number];

function lineOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const ops: Op[] = [];
  const push = (tag: Op[0], i1: number, i2: number, j1: number, j2: number) => {
    const last = ops[ops.length - 1];
    if (last && last[0] === tag && last[2] === i1 && last[4] === j1) {
      last[2] = i2;
      last[4] = j2;
    } else {
      ops.push([tag, i1, i2, j1, j2]);
    }
  };
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      push('equal', i, i + 1, j, j + 1);
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i][j + 1] > lcs[i + 1][j])) {
      push('insert', i, i, j, j + 1);
      j++;
    } else {
      push('delete', i, i + 1, j, j);
      i++;
    }
  }
  return ops;
}

function formatRange(start: number, stop: number): string {
  let beginning = start + 1;
  const length = stop - start;
  if (length === 1) {
    return `${beginning}`;
  }
  if (!length) {
    beginning -= 1;
  }
  return `${beginning},${length}`;
}

/** A unified diff in the style of Python's difflib.unified_diff (3 lines of context). */
export function unifiedDiff(a: string[], b: string[], fromFile: string, toFile: string, context = 3): string[] {
  let ops = lineOps(a, b);
  if (!ops.some(op => op[0] !== 'equal')) {
    return [];
  }
  if (!ops.length) {
    ops = [['equal', 0, 1, 0, 1]];
  }
  // Trim leading/trailing context, then split on long equal runs (difflib get_grouped_opcodes).
  const first = ops[0];
  if (first[0] === 'equal') {
    ops[0] = ['equal', Math.max(first[1], first[2] - context), first[2], Math.max(first[3], first[4] - context), first[4]];
  }
  const lastOp = ops[ops.length - 1];
  if (lastOp[0] === 'equal') {
    ops[ops.length - 1] = ['equal', lastOp[1], Math.min(lastOp[2], lastOp[1] + context), lastOp[3], Math.min(lastOp[4], lastOp[3] + context)];
  }
  const groups: Op[][] = [];
  let group: Op[] = [];
  for (const [tag, i1, i2, j1, j2] of ops) {
    if (tag === 'equal' && i2 - i1 > context * 2) {
      group.push([tag, i1, Math.min(i2, i1 + context), j1, Math.min(j2, j1 + context)]);
      groups.push(group);
      group = [[tag, Math.max(i1, i2 - context), i2, Math.max(j1, j2 - context), j2]];
    } else {
      group.push([tag, i1, i2, j1, j2]);
    }
  }
  if (group.length && !(group.length === 1 && group[0][0] === 'equal')) {
    groups.push(group);
  }
  const lines = [`--- ${fromFile}`, `+++ ${toFile}`];
  for (const g of groups) {
    const head = g[0];
    const tail = g[g.length - 1];
    lines.push(`@@ -${formatRange(head[1], tail[2])} +${formatRange(head[3], tail[4])} @@`);
    for (const [tag, i1, i2, j1, j2] of g) {
      if (tag === 'equal') {
        a.slice(i1, i2).forEach(line => lines.push(' ' + line));
      } else {
        a.slice(i1, i2).forEach(line => lines.push('-' + line));
        b.slice(j1, j2).forEach(line => lines.push('+' + line));
      }
    }
  }
  return lines;
}

/** A unified diff of what a call writes (its roles' `diff`), from the `old` argument (or nothing);
 * null for a call that writes no text, and for a call that rewrites a cell (a static card takes
 * that diff from the call's output). */
export function diffPreview(name: string, args: Json, roles: CardRoles): string | null {
  const diff = roles.diff;
  const parsed = parseArguments(args);
  if (!isObject(diff) || parsed === null || diffInOutput(roles)) {
    return null;
  }
  const newText = typeof diff!.new === 'string' ? stringArg(parsed, diff!.new) : null;
  if (newText === null) {
    return null;
  }
  const path = (typeof diff!.path === 'string' ? stringArg(parsed, diff!.path) : null) || 'file';
  const oldText = typeof diff!.old === 'string' ? stringArg(parsed, diff!.old) : '';
  if (oldText === null) {
    return null;
  }
  const lines = unifiedDiff(splitLines(oldText), splitLines(newText), `a/${path}`, `b/${path}`);
  if (lines.length) {
    lines.push(...notesOf(diff!.notes, parsed));
  }
  return lines.length ? lines.join('\n') : null;
}

/** A call that rewrites a cell (a `cell` and a `diff` role): its static diff is its output's. */
function diffInOutput(roles: CardRoles): boolean {
  return roleKey(roles, 'cell') !== null && isObject(roles.diff);
}

const EDIT_CELL_DIFF_HEAD = '--- before\n+++ after\n';

/** [summary, diff] of a completed edit_cell output ("Replaced the source of cell … ." then the
 * unified diff of the old and new source); null when it holds no diff. */
export function splitEditCellOutput(output: string): [string, string] | null {
  const at = output.indexOf('\n' + EDIT_CELL_DIFF_HEAD);
  if (at < 0 || !output.startsWith('Replaced the source of cell')) {
    return null;
  }
  return [output.slice(0, at), output.slice(at + 1)];
}

/** Once the card of a call that rewrites a cell (edit_cell) has its call and a completed output,
 * the output's diff becomes the card's diff and the output keeps the summary line. */
function takeEditCellDiff(card: ToolCard, roles: CardRoles): void {
  if (!card.has_call || !diffInOutput(roles) || card.output === null || card.output_stop_reason !== 'completed') {
    return;
  }
  const parts = splitEditCellOutput(card.output);
  if (parts !== null) {
    card.output = parts[0];
    card.diff = visibleControls(parts[1]);
  }
}

// --- grouping -------------------------------------------------------------------------------

class Scope {
  cards = new Map<string, ToolCard[]>();
  children = new Map<string, [SubagentGroup, Scope]>();
  openCompaction: EventBlock | null = null;
  openMcp: EventBlock | null = null;

  constructor(public blocks: Block[], public tools: ToolCards) {}

  roles(name: string): CardRoles {
    return rolesOf(name, this.tools);
  }

  cardFor(toolCallId: string, wants: 'call' | 'decision' | 'output'): ToolCard {
    for (const card of this.cards.get(toolCallId) ?? []) {
      if (wants === 'call' && !card.has_call) {
        return card;
      }
      if (wants === 'decision' && card.decision === null) {
        return card;
      }
      if (wants === 'output' && card.output === null) {
        return card;
      }
    }
    const card: ToolCard = {
      kind: 'tool',
      tool_call_id: toolCallId,
      name: '',
      arguments: '',
      call_stop_reason: null,
      title: 'tool',
      detail: '',
      description: null,
      command: null,
      workdir: null,
      body: null,
      diff: null,
      decision: null,
      decision_reason: null,
      output: null,
      images: [],
      output_stop_reason: null,
      has_call: false
    };
    if (!this.cards.has(toolCallId)) {
      this.cards.set(toolCallId, []);
    }
    this.cards.get(toolCallId)!.push(card);
    this.blocks.push(card);
    return card;
  }

  child(sessionId: string): Scope {
    if (!this.children.has(sessionId)) {
      const group: SubagentGroup = { kind: 'subagent', session_id: sessionId, provider: null, model_id: null, blocks: [] };
      this.children.set(sessionId, [group, new Scope(group.blocks, this.tools)]);
      this.blocks.push(group);
    }
    return this.children.get(sessionId)![1];
  }

  group(sessionId: string): SubagentGroup {
    return this.children.get(sessionId)![0];
  }
}

function fillCall(card: ToolCard, payload: Json, roles: CardRoles): void {
  const name = String(payload.name || '');
  const args = typeof payload.arguments === 'string' ? payload.arguments : compactJson(payload.arguments ?? '');
  card.has_call = true;
  card.name = name;
  card.arguments = visibleControls(args);
  card.call_stop_reason = String(payload.stop_reason || 'completed');
  const [title, detail] = toolCardSummary(payload, roles);
  card.title = visibleControls(title);
  card.detail = visibleControls(detail);
  card.description = visibleOrNull(toolDescription(args));
  card.body = visibleOrNull(callBody(args, roles));
  card.diff = visibleOrNull(diffPreview(name, args, roles)); // null for a rewritten cell: its output's
  takeEditCellDiff(card, roles);
  const command = roleKey(roles, 'command');
  if (command !== null) {
    const workdirKey = roleKey(roles, 'workdir');
    card.command = card.body;
    card.workdir = workdirKey ? visibleOrNull(stringArg(parseArguments(args), workdirKey)) : null;
  }
}

function pyFixed1(ms: number): string {
  return (ms / 1000).toFixed(1);
}

// How a failed request's notice starts, by its stop reason (transcript_model.py `request_label`):
// the error text after it names the cause, so `timeout` — which the engine uses for every
// failure that may pass — is not called a timeout.
const REQUEST_LABELS: Record<string, string> = {
  failed: 'Request failed',
  timeout: 'Request failed',
  malformed: 'Unusable response',
  auth: 'Credentials refused',
  aborted: 'Request aborted'
};

function retryText(payload: Json): [string, string] {
  const status = String(payload.status);
  const error = payload.error_message;
  const attempt = payload.attempt;
  const waitMs = payload.retry_in_ms;
  const label = REQUEST_LABELS[status] ?? `Request ${status}`;
  const head = label + (error ? `: ${error}` : '');
  if (Number.isInteger(attempt) && Number.isInteger(waitMs)) {
    return ['retry', `${head} — retry ${attempt} in ${pyFixed1(waitMs)} s`];
  }
  // No wait: nothing is retried (an interrupt, the last attempt), as the live notice says.
  if (Number.isInteger(attempt) && (attempt as number) > 1) {
    return ['request_error', `${head} (attempt ${attempt})`];
  }
  return ['request_error', head];
}

function compactionText(begin: Json | null, end: Json | null): string {
  const source = begin ?? end ?? {};
  let text = `Compaction (${source.reason}, ${source.mode})`;
  if (begin) {
    text += ` at ${begin.context} context tokens, ${begin.turns} turns`;
  }
  if (end) {
    text += ` — ${end.status}`;
    if (end.error_message) {
      text += `: ${end.error_message}`;
    }
  }
  return text;
}

function mcpText(begin: Json | null, end: Json | null): string {
  const results: Json[] = Array.isArray(end?.results) ? end.results : [];
  const servers: Json[] = begin?.servers?.length ? begin.servers : results.map(r => r.server);
  let text = 'MCP connect: ' + servers.map(String).join(', ');
  if (end) {
    const parts = results.map(r => {
      let part = `${r.server} ${r.status} in ${r.duration_ms} ms`;
      if (r.tools !== undefined && r.tools !== null) {
        part += `, ${r.tools} tools`;
      }
      if (r.error) {
        part += ` (${r.error})`;
      }
      return part;
    });
    text += ` — ${end.status}` + (parts.length ? ': ' + parts.join('; ') : '');
  }
  return text;
}

function addEvent(scope: Scope, payload: Json): void {
  const kind = payload.type;
  if (SILENT_EVENTS.has(kind)) {
    return;
  }
  if (kind === 'approval_decision') {
    const card = scope.cardFor(String(payload.tool_call_id ?? ''), 'decision');
    card.decision = String(payload.decision);
    card.decision_reason = typeof payload.reason === 'string' && payload.reason ? visibleControls(payload.reason) : null;
  } else if (kind === 'request_end') {
    if (payload.status === 'completed') {
      return;
    }
    const [event, text] = retryText(payload);
    const details: { [key: string]: Json } = {};
    for (const key of ['error_message', 'attempt', 'retry_in_ms']) {
      if (key in payload) {
        details[key] = payload[key];
      }
    }
    scope.blocks.push({ kind: 'event', event, text, status: String(payload.status), details });
  } else if (kind === 'compaction_begin') {
    const block: EventBlock = { kind: 'event', event: 'compaction', text: compactionText(payload, null), status: null, details: { begin: payload } };
    scope.openCompaction = block;
    scope.blocks.push(block);
  } else if (kind === 'compaction_end') {
    let block = scope.openCompaction;
    if (!block) {
      block = { kind: 'event', event: 'compaction', text: '', status: null, details: {} };
      scope.blocks.push(block);
    }
    block.details.end = payload;
    block.status = String(payload.status);
    block.text = compactionText(block.details.begin ?? null, payload);
    scope.openCompaction = null;
  } else if (kind === 'mcp_connect_begin') {
    const block: EventBlock = { kind: 'event', event: 'mcp_connect', text: mcpText(payload, null), status: null, details: { begin: payload } };
    scope.openMcp = block;
    scope.blocks.push(block);
  } else if (kind === 'mcp_connect_end') {
    let block = scope.openMcp;
    if (!block) {
      block = { kind: 'event', event: 'mcp_connect', text: '', status: null, details: {} };
      scope.blocks.push(block);
    }
    block.details.end = payload;
    block.status = String(payload.status);
    block.text = mcpText(block.details.begin ?? null, payload);
    scope.openMcp = null;
  } else if (kind === 'abort') {
    const reason = payload.reason ?? null;
    scope.blocks.push({ kind: 'event', event: 'abort', text: 'Aborted' + (reason ? `: ${reason}` : ''), status: 'aborted', details: { reason } });
  }
}

function addModel(scope: Scope, payload: Json): void {
  const kind = payload.type;
  const stop = String(payload.stop_reason || 'completed');
  if (kind === 'text') {
    const text = String(payload.text ?? '');
    const role = String(payload.role ?? 'assistant');
    const match = role === 'assistant' ? MAX_TURNS_NOTICE.exec(text) : null;
    if (match) {
      scope.blocks.push({ kind: 'event', event: 'max_turns', text, status: stop, details: { max_turns: Number(match[1]) } });
      return;
    }
    const budget = role === 'assistant' ? BUDGET_STOP_NOTICE.exec(text) : null;
    if (budget) {
      // the unsent request's own request_end says the same: the notice replaces it
      const same = (b: Block) => b.kind === 'event' && (b as EventBlock).event === 'request_error' && (b as EventBlock).details.error_message === budget[1];
      scope.blocks.splice(0, scope.blocks.length, ...scope.blocks.filter(b => !same(b)));
      scope.blocks.push({ kind: 'event', event: 'budget_stop', text, status: stop, details: { reason: budget[1] } });
      return;
    }
    scope.blocks.push({ kind: 'text', role, text, stop_reason: stop, sender: payload.sender ?? null });
  } else if (kind === 'thinking') {
    scope.blocks.push({ kind: 'thinking', thinking: String(payload.thinking ?? ''), stop_reason: stop });
  } else if (kind === 'inline_thinking') {
    scope.blocks.push({ kind: 'thinking', thinking: `[encrypted thinking, ${payload.mime_type}]`, stop_reason: stop });
  } else if (kind === 'image_url') {
    scope.blocks.push({ kind: 'image', source: String(payload.image_url ?? ''), mime_type: null });
  } else if (kind === 'inline_data') {
    const mime = String(payload.mime_type ?? 'application/octet-stream');
    scope.blocks.push({ kind: 'image', source: `data:${mime};base64,${payload.data ?? ''}`, mime_type: mime });
  } else if (kind === 'tool_call') {
    fillCall(scope.cardFor(String(payload.tool_call_id ?? ''), 'call'), payload, scope.roles(String(payload.name || '')));
  } else if (kind === 'tool_call_output') {
    const card = scope.cardFor(String(payload.tool_call_id ?? ''), 'output');
    card.output = String(payload.output ?? '');
    card.images = (Array.isArray(payload.images) ? payload.images : []).filter((i: Json) => typeof i === 'string');
    card.output_stop_reason = stop;
    takeEditCellDiff(card, scope.roles(card.name));
  }
}

/** Group a Task's complete messages and events (wire dicts) into display blocks; `tools` are the
 * bundle's card roles (`readBundle` fills the legacy ones in for an older bundle). */
export function buildBlocks(messages: Json[], tools: ToolCards): Block[] {
  const blocks: Block[] = [];
  const root = new Scope(blocks, tools);
  for (const data of messages) {
    if (!isObject(data) || !isObject(data.payload)) {
      continue;
    }
    const payload = data.payload;
    const origin: string[] = Array.isArray(data.origin) ? data.origin.map(String) : [];
    let scope = root;
    for (const hop of origin) {
      scope = scope.child(hop);
    }
    if (data.type === 'session_meta') {
      if (origin.length) {
        let owner = root;
        for (const hop of origin.slice(0, -1)) {
          owner = owner.child(hop);
        }
        const group = owner.group(origin[origin.length - 1]);
        group.provider = payload.provider || group.provider;
        group.model_id = payload.model_id || group.model_id;
      }
      continue;
    }
    if (String(payload.type ?? '').startsWith('partial_')) {
      continue;
    }
    if (data.type === 'event_msg') {
      addEvent(scope, payload);
    } else if (data.type === 'model_msg') {
      addModel(scope, payload);
    }
  }
  return blocks;
}
