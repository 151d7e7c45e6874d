import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../src/infra/project-root.js';
import { anchorsOf, brokenLinks, githubSlug, headingText, linksOf } from './support/markdown-links.js';

/**
 * The README is the door and docs/ holds the rooms: every relative link and image between them names
 * a file that exists, and every anchor one that a heading of its page makes (GitHub's slugs).
 */
const root = projectRoot();

async function markdownUnder(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? markdownUnder(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [])),
  );
  return nested.flat().sort();
}

t.test('makes heading anchors as GitHub does', async (t) => {
  const slug = (heading: string) => githubSlug(headingText(heading));
  t.equal(slug('What clients do when a request fails'), 'what-clients-do-when-a-request-fails');
  t.equal(slug('A cluster on one machine: `npm run cluster`'), 'a-cluster-on-one-machine-npm-run-cluster', 'code keeps its text, punctuation goes');
  t.equal(slug("The order's `fiscalReference`"), 'the-orders-fiscalreference');
  t.equal(slug('NATS credentials (integrations of kind `nats`)'), 'nats-credentials-integrations-of-kind-nats');
  t.equal(slug('The message contract: `/asyncapi.json`'), 'the-message-contract-asyncapijson');
  t.equal(slug('Größe & Maße – Übersicht'), 'größe--maße--übersicht', 'letters of any script stay; each space is a hyphen');
  t.equal(slug('snake_case_name and 2 numbers'), 'snake_case_name-and-2-numbers', 'underscores and digits stay');
  t.equal(slug('[A link](x.md) and **bold** _words_'), 'a-link-and-bold-words', 'links show their text, emphasis goes');
  t.equal(slug('DSFinV-K export'), 'dsfinv-k-export', 'hyphens stay');
  t.equal(slug('m² → ½ “quoted” 🙂 end'), 'm---quoted--end', 'symbols, superscripts, quotes and emoji go');

  t.same(anchorsOf('# Notes\n\n## Notes\n\n### Notes\n\nNotes\n-----\n'), ['notes', 'notes-1', 'notes-2', 'notes-3'], 'repeats are numbered');
  t.same(anchorsOf('# Title #\n\n```sh\n# not a heading\n```\n\n    # code\n\n- item\n---\n'), ['title'], 'code, closing hashes and rules make no heading');
});

t.test('finds links and images outside code, with their lines', async (t) => {
  const page = [
    'See [the API](docs/api.md#errors) and ![a receipt](docs/receipt.png).', // 1
    '`[not a link](nowhere.md)` and [[nested]](a.md)', // 2
    '', // 3
    '```md', // 4
    '[in a fence](nowhere.md)', // 5
    '```', // 6
    '[ref]: docs/ops.md', // 7
    '<img src="pic.png"> [outside](https://example.com) <!-- [hidden](x.md) -->', // 8
  ].join('\n');
  t.same(
    linksOf(page).map((l) => [l.line, l.image, l.target]),
    [
      [1, false, 'docs/api.md#errors'],
      [1, true, 'docs/receipt.png'],
      [2, false, 'a.md'],
      [7, false, 'docs/ops.md'],
      [8, false, 'https://example.com'],
      [8, true, 'pic.png'],
    ],
  );
});

t.test('reports a link to a missing file, an anchor no heading makes and a missing image', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'docs-links-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, 'docs'));
  await writeFile(path.join(dir, 'docs', 'a.md'), '# Page A\n\n## Part one\n\nBack to the [door](../README.md#start).\n');
  await writeFile(
    path.join(dir, 'README.md'),
    [
      '# Door',
      '',
      '## Start',
      '',
      '[fine](docs/a.md#part-one), [this page](#start), [external](https://example.com/x.md#y)',
      '[gone](docs/b.md), [no such part](docs/a.md#part-two), [here](#nowhere)',
      '![missing picture](docs/missing.png)',
      '`[in code](docs/b.md)`',
    ].join('\n'),
  );
  const { checked, broken } = await brokenLinks(dir, ['README.md', 'docs/a.md']);
  t.equal(checked, 7, 'every relative link and image is checked, external ones are not');
  t.same(
    broken.map((b) => `${b.file}:${b.line} ${b.target}`),
    ['README.md:6 docs/b.md', 'README.md:6 docs/a.md#part-two', 'README.md:6 #nowhere', 'README.md:7 docs/missing.png'],
  );
  t.match(broken[1]!.reason, /no heading of docs\/a\.md makes/);
});

t.test('finds every relative link and image of the README and docs/ on a file that exists and a heading of its page', async (t) => {
  const files = ['README.md', ...(await markdownUnder('docs'))];
  t.ok(files.length >= 8, `the README and the docs pages (${files.join(', ')})`);
  const { checked, broken } = await brokenLinks(root, files);
  t.ok(checked > 50, `links were found (${checked})`);
  t.same(
    broken.map((b) => `${b.file}:${b.line}: ${b.image ? 'image' : 'link'} ${b.target} ${b.reason}`),
    [],
    'no broken link',
  );
});
