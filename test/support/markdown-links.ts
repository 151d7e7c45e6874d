import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Relative links and images of Markdown pages, checked as GitHub renders them: the file a link names
 * must exist, and its anchor (`page.md#anchor`, `#anchor`) must be one a heading of that page makes.
 * External links (any scheme: http, https, mailto) are not followed. Text in code (fenced blocks and
 * code spans) and HTML comments holds no links.
 */

export interface Link {
  /** The destination as written, such as `docs/api.md#errors`. */
  target: string;
  line: number;
  image: boolean;
}

export interface BrokenLink extends Link {
  file: string;
  reason: string;
}

/**
 * GitHub's anchor for a heading's text (github-slugger): lowercase; removed every character that is
 * not a letter (of any script), a mark, a digit, a letter-number, a connector (`_`), a space or a
 * hyphen, such as other punctuation, symbols, superscript digits and other white space; each space
 * a hyphen.
 */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{Alphabetic}\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a page's headings make, in order; a repeated slug gets `-1`, `-2`, ... as on GitHub. */
export function anchorsOf(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  const add = (slug: string) => {
    let result = slug;
    while (seen.has(result)) {
      const n = seen.get(slug)! + 1;
      seen.set(slug, n);
      result = `${slug}-${n}`;
    }
    seen.set(result, 0);
    anchors.push(result);
  };
  for (const heading of headingsOf(markdown)) add(githubSlug(headingText(heading)));
  // Explicit anchors: <a name="x"></a>, <a id="x">, <span id="x">.
  for (const m of withoutCode(markdown).matchAll(/<[a-z]+\b[^>]*?\b(?:id|name)\s*=\s*(["'])(.*?)\1/gi)) anchors.push(m[2]!);
  return anchors;
}

/** The raw Markdown of each heading (ATX `## text` and setext `text` over `===`/`---`), code excluded. */
export function headingsOf(markdown: string): string[] {
  const headings: string[] = [];
  let paragraph: string[] = [];
  let afterBreak = true; // a paragraph starts after a blank line, a heading or the page's start
  for (const line of blankFences(markdown).split('\n')) {
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (line.trim() === '' || atx) {
      if (atx) headings.push(atx[2] ?? '');
      paragraph = [];
      afterBreak = true;
      continue;
    }
    if (paragraph.length && /^ {0,3}(=+|-+)[ \t]*$/.test(line)) {
      headings.push(paragraph.join('\n'));
      paragraph = [];
      afterBreak = true;
      continue;
    }
    const startsBlock = /^ {0,3}([-*+>|<]|\d+[.)](\s|$))/.test(line) || /^( {4}|\t)/.test(line);
    if (paragraph.length && !startsBlock) paragraph.push(line.trim());
    else paragraph = afterBreak && !startsBlock ? [line.trim()] : [];
    afterBreak = false;
  }
  return headings;
}

/** A heading's text as GitHub shows it: code spans' content kept, links as their text, markup gone. */
export function headingText(heading: string): string {
  return heading
    .split(/(`+)([\s\S]*?)\1/)
    .map((part, i) => {
      if (i % 3 === 2) return part.trim() === '' ? part : part.replace(/^ (.*) $/s, '$1'); // a code span's content
      if (i % 3 === 1) return ''; // the backticks around it
      return part
        .replace(/<!--[\s\S]*?-->/g, '')
        .replace(/!\[[^\]]*\]\([^)]*\)/g, '') // an image shows no text
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
        .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
        .replace(/<[^>]+>/g, '')
        .replace(/&amp;/g, '&')
        .replace(/\\([!-/:-@[-`{-~])/g, '$1')
        .replace(/(^|[^\p{L}\p{N}_])_+([^_\n]+?)_+(?=[^\p{L}\p{N}_]|$)/gu, '$1$2'); // _emphasis_, not snake_case
    })
    .join('')
    .trim();
}

/** Every link and image of a page with a destination (inline, reference definitions, HTML src/href). */
export function linksOf(markdown: string): Link[] {
  const text = withoutCode(markdown);
  const lineAt = lineCounter(text);
  const links: Link[] = [];
  for (const m of text.matchAll(/\]\(/g)) {
    const close = m.index;
    const open = openingBracket(text, close);
    if (open < 0) continue;
    const target = destination(text, close + 2);
    if (target === undefined) continue;
    links.push({ target, line: lineAt(close), image: text[open - 1] === '!' });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm)) {
    links.push({ target: unbracket(m[1]!), line: lineAt(m.index), image: false });
  }
  for (const m of text.matchAll(/<(img|a|source)\b[^>]*?\b(src|href)\s*=\s*(["'])(.*?)\3/gi)) {
    links.push({ target: m[4]!, line: lineAt(m.index), image: m[1]!.toLowerCase() !== 'a' });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** The links of `files` (paths relative to `root`) that name a missing file or an anchor no heading makes. */
export async function brokenLinks(root: string, files: readonly string[]): Promise<{ checked: number; broken: BrokenLink[] }> {
  const anchorsByFile = new Map<string, Promise<Set<string>>>();
  const anchors = (file: string) => {
    if (!anchorsByFile.has(file)) anchorsByFile.set(file, readFile(file, 'utf8').then((text) => new Set(anchorsOf(text))));
    return anchorsByFile.get(file)!;
  };
  const broken: BrokenLink[] = [];
  let checked = 0;
  for (const file of files) {
    const absolute = path.join(root, file);
    for (const link of linksOf(await readFile(absolute, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith('//')) continue;
      checked++;
      const reason = await problemOf(root, absolute, link.target, anchors);
      if (reason) broken.push({ ...link, file, reason });
    }
  }
  return { checked, broken };
}

async function problemOf(root: string, from: string, target: string, anchors: (file: string) => Promise<Set<string>>): Promise<string | undefined> {
  const hash = target.indexOf('#');
  const pathPart = (hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchorPart = hash < 0 ? undefined : target.slice(hash + 1);
  let decoded: string;
  let anchor: string | undefined;
  try {
    decoded = decodeURI(pathPart);
    anchor = anchorPart === undefined ? undefined : decodeURIComponent(anchorPart);
  } catch {
    return 'is not a valid URL';
  }
  const file = decoded === '' ? from : decoded.startsWith('/') ? path.join(root, decoded) : path.resolve(path.dirname(from), decoded);
  if (path.relative(root, file).startsWith('..')) return 'points outside the repository';
  const found = await stat(file).catch(() => undefined);
  if (!found) return `names ${path.relative(root, file)}, which does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!found.isFile() || !file.endsWith('.md')) {
    return /^L\d+(-L\d+)?$/.test(anchor) && found.isFile() ? undefined : `has an anchor, but ${path.relative(root, file)} is no Markdown page`;
  }
  if ((await anchors(file)).has(anchor)) return undefined;
  return `names #${anchor}, which no heading of ${path.relative(root, file)} makes`;
}

/** The bracket that opens the link text closed at `close`, or -1 (nested brackets counted). */
function openingBracket(text: string, close: number): number {
  let depth = 0;
  for (let i = close - 1; i >= 0; i--) {
    const c = text[i];
    if (text[i - 1] === '\\') continue;
    if (c === ']') depth++;
    else if (c === '[') {
      if (depth === 0) return i;
      depth--;
    } else if (c === '\n' && text[i + 1] === '\n') return -1;
  }
  return -1;
}

/** The destination of an inline link starting at `start` (just after `](`), or undefined when there is none. */
function destination(text: string, start: number): string | undefined {
  let i = start;
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n') i++;
  if (text[i] === '<') {
    const end = text.indexOf('>', i);
    return end < 0 ? undefined : text.slice(i + 1, end);
  }
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    const c = text[j]!;
    if (/\s/.test(c)) break;
    if (c === '(') depth++;
    if (c === ')') {
      if (depth === 0) break;
      depth--;
    }
  }
  return text.slice(i, j);
}

function unbracket(target: string): string {
  return target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target;
}

function lineCounter(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** The page with fenced code blocks, code spans and HTML comments blanked (line breaks kept, so lines still count). */
function withoutCode(markdown: string): string {
  return blankCodeSpans(blankFences(markdown)).replace(/<!--[\s\S]*?-->/g, blank);
}

function blank(s: string): string {
  return s.replace(/[^\n]/g, ' ');
}

function blankFences(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: { char: string; length: number } | undefined;
  return lines
    .map((line) => {
      const m = /^\s*(`{3,}|~{3,})/.exec(line);
      if (!fence) {
        if (m && !(m[1]![0] === '`' && line.slice(m[0].length).includes('`'))) {
          fence = { char: m[1]![0]!, length: m[1]!.length };
          return '';
        }
        return line;
      }
      if (m && m[1]![0] === fence.char && m[1]!.length >= fence.length && line.trim() === m[1]) fence = undefined;
      return '';
    })
    .join('\n');
}

/** Code spans end at the paragraph they start in; a backtick run without its match is literal text. */
function blankCodeSpans(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`' || (i > 0 && text[i - 1] === '\\')) {
      out += text[i];
      i++;
      continue;
    }
    let n = 0;
    while (text[i + n] === '`') n++;
    const paragraphEnd = (() => {
      const m = /\n[ \t]*\n/.exec(text.slice(i));
      return m ? i + m.index : text.length;
    })();
    let close = -1;
    for (let j = i + n; j < paragraphEnd; ) {
      if (text[j] !== '`') {
        j++;
        continue;
      }
      let k = 0;
      while (text[j + k] === '`') k++;
      if (k === n) {
        close = j;
        break;
      }
      j += k;
    }
    if (close < 0) {
      out += text.slice(i, i + n);
      i += n;
      continue;
    }
    out += blank(text.slice(i, close + n));
    i = close + n;
  }
  return out;
}
