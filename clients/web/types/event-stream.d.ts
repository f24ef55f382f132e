/**
 * Reads a `text/event-stream` body as it arrives: feed it text in whatever pieces it comes, get back
 * the complete events. Lines end in `\n`, `\r\n` or `\r`; comments and other fields are skipped.
 */
export class EventStreamReader {
    buffer: string;
    /** @type {string | null} */
    name: string | null;
    /** @type {string[]} */
    data: string[];
    /**
     * @param {string} text
     * @returns {{name: string, data: string}[]}
     */
    feed(text: string): {
        name: string;
        data: string;
    }[];
}
