/**
 * The journal reader at start-up (scanJournal, journalProblem), on journals written by the
 * Journal class itself and then damaged: where reading stops, what counts as a torn last frame
 * and what as damage before it, across files, and what LMDB's records make harmless or wrong.
 * (test/store/datadir.test.ts does the same end to end on a real server.)
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FrameBuilder, Journal, OP_META_PUT, scanJournal, frameSeq, FILE_HEADER } from '../../dist/store/journal.js';
import { journalProblem } from '../../dist/store/datadir.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-jscan-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let seq = 0;

/** A journal of `perFile` frames per file (one record each), `files` files; returns the frame offsets per file. */
function write(perFile: number[], nextSeq = 1): { dir: string; offsets: number[][] } {
  const dir = path.join(tmp, `j${seq++}`);
  fs.mkdirSync(dir);
  const j = new Journal(dir, 1, false);
  j.start(nextSeq);
  const fb = new FrameBuilder();
  const offsets: number[][] = [];
  let s = nextSeq;
  for (let f = 0; f < perFile.length; f++) {
    if (f > 0) j.rotate();
    const offs: number[] = [];
    for (let i = 0; i < perFile[f]; i++) {
      offs.push(i === 0 ? FILE_HEADER : j.size);
      fb.put(OP_META_PUT, Buffer.from(`key${s}`), Buffer.from(`value${s}`));
      assert.equal(j.append(fb.finish(s++)), null);
    }
    offsets.push(offs);
  }
  j.close(false);
  return { dir, offsets };
}

function flip(file: string, at: number): void {
  const b = fs.readFileSync(file);
  b[at] ^= 0x10;
  fs.writeFileSync(file, b);
}

const j = (dir: string, n: number) => path.join(dir, `journal.${n}`);

describe('journal scan', () => {
  it('an intact journal of several files: every frame, each file with its header and range', () => {
    const { dir } = write([5, 4, 3]);
    const s = scanJournal(dir, 0);
    assert.equal(s.damage, null);
    assert.equal(s.tail, null);
    assert.deepEqual(s.frames.map(frameSeq), Array.from({ length: 12 }, (_, i) => i + 1));
    assert.deepEqual(s.files.map((f) => [f.num, f.firstSeq, f.first, f.last]), [[1, 1, 1, 5], [2, 6, 6, 9], [3, 10, 10, 12]]);
    assert.equal(journalProblem(dir, s, 0, 3), null);
    assert.deepEqual(scanJournal(dir, 7).frames.map(frameSeq), [8, 9, 10, 11, 12]);
  });

  it('damage in a file whose frames go on in the next file is damage, counting the frames after it', () => {
    const { dir, offsets } = write([5, 4]);
    flip(j(dir, 1), offsets[0][3] + 25);
    const s = scanJournal(dir, 0);
    assert.ok(s.damage !== null);
    assert.equal(s.damage.file, j(dir, 1));
    assert.equal(s.damage.offset, offsets[0][3]);
    assert.equal(s.damage.lastGood, 3);
    assert.equal(s.damage.following, 5); // frame 5, then 6..9 in journal.2
    assert.equal(s.damage.unapplied, 5);
    assert.match(journalProblem(dir, s, 0, 2)!, /journal\.1: frame checksum mismatch at offset \d+ \(after frame 3\), followed by 5 intact frames \(5 records/);
    // LMDB holding frame 4 (the damaged one) makes it harmless: skipped, 5..9 replayed.
    const s2 = scanJournal(dir, 4);
    assert.equal(s2.damage, null);
    assert.deepEqual(s2.skipped.map((k) => [k.first, k.last]), [[4, 4]]);
    assert.deepEqual(s2.frames.map(frameSeq), [5, 6, 7, 8, 9]);
  });

  it('damage at the end of a file that LMDB already holds is skipped to the next file', () => {
    const { dir, offsets } = write([5, 3]);
    flip(j(dir, 1), offsets[0][4] + 25); // frame 5, the last of journal.1
    const s = scanJournal(dir, 5);
    assert.equal(s.damage, null);
    assert.deepEqual(s.skipped.map((k) => [k.first, k.last]), [[5, null]]);
    assert.deepEqual(s.frames.map(frameSeq), [6, 7, 8]);
    assert.equal(journalProblem(dir, s, 5, 2), null);
    // Without LMDB holding it, the same damage is damage (frames 6..8 follow).
    assert.equal(scanJournal(dir, 4).damage?.following, 3);
  });

  it('a torn last frame is the tail', () => {
    const { dir, offsets } = write([4]);
    const b = fs.readFileSync(j(dir, 1));
    fs.writeFileSync(j(dir, 1), b.subarray(0, offsets[0][3] + 22)); // cut inside frame 4's payload (after its key length)
    const s = scanJournal(dir, 0);
    assert.equal(s.damage, null);
    assert.deepEqual(s.frames.map(frameSeq), [1, 2, 3]);
    assert.equal(s.tail?.offset, offsets[0][3]);
    assert.equal(s.tail?.bytes, 22);
    assert.equal(s.tail?.records, 0);
  });

  it('a damaged file header before intact frames is damage; the file LMDB names, missing or emptied, is an error', () => {
    const { dir } = write([3]);
    flip(j(dir, 1), 10); // inside the header's file number
    const s = scanJournal(dir, 0);
    assert.equal(s.damage?.reason, 'damaged file header');
    assert.equal(s.damage?.offset, 0);
    fs.truncateSync(j(dir, 1), 0);
    assert.match(journalProblem(dir, scanJournal(dir, 0), 0, 1)!, /journal\.1 is empty \(0 bytes, no header\)/);
    fs.rmSync(j(dir, 1));
    assert.match(journalProblem(dir, scanJournal(dir, 0), 0, 1)!, /journal\.1 is missing/);
    assert.equal(journalProblem(dir, scanJournal(dir, 0), 0, 0), null, 'after a clean stop no journal is expected');
  });

  it('frames missing between LMDB and the journal (a file or the LMDB file removed) are an error', () => {
    const { dir } = write([3, 3]);
    fs.rmSync(j(dir, 1));
    assert.match(journalProblem(dir, scanJournal(dir, 0), 0, 2)!, /LMDB holds frames up to 0, the journal's next frame is 4 \(frames 1\.\.3 are missing/);
    assert.equal(journalProblem(dir, scanJournal(dir, 3), 3, 2), null, 'LMDB holds 1..3: nothing is missing');
    // A file that announces frames it does not hold (header only), LMDB behind it.
    const e = write([0], 8);
    assert.match(journalProblem(e.dir, scanJournal(e.dir, 5), 5, 1)!, /announce frames up to 7 but hold none after 5/);
  });
});
