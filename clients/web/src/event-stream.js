// The live stream's framing (protocol.md §9): `text/event-stream`, read as it arrives.

/**
 * Reads a `text/event-stream` body as it arrives: feed it text in whatever pieces it comes, get back
 * the complete events. Lines end in `\n`, `\r\n` or `\r`; comments and other fields are skipped.
 */
export class EventStreamReader {
  constructor() {
    this.buffer = '';
    /** @type {string | null} */
    this.name = null;
    /** @type {string[]} */
    this.data = [];
  }

  /**
   * @param {string} text
   * @returns {{name: string, data: string}[]}
   */
  feed(text) {
    this.buffer += text;
    const events = [];
    let start = 0;
    for (;;) {
      const match = /\r\n|\r|\n/g;
      match.lastIndex = start;
      const found = match.exec(this.buffer);
      // A lone \r at the very end may be the first half of \r\n: wait for the next piece.
      if (!found || (found[0] === '\r' && found.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(start, found.index);
      start = found.index + found[0].length;
      if (line === '') {
        if (this.name !== null || this.data.length > 0) events.push({ name: this.name ?? 'message', data: this.data.join('\n') });
        this.name = null;
        this.data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') this.name = value;
        else if (field === 'data') this.data.push(value);
      }
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }
}
