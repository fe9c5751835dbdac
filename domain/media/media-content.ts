/**
 * What a tracker's file is, read from its bytes and never from its name: trackers name every picture
 * `camera_picture.jpg`, and a name says nothing a client could rely on. Only images the API can serve
 * safely are kept: JPEG (`FF D8 FF`) and PNG (its eight-byte signature).
 */
export const MEDIA_CONTENT_TYPES = ['image/jpeg', 'image/png'] as const;
export type MediaContentType = (typeof MEDIA_CONTENT_TYPES)[number];

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The content type the bytes show, or undefined when they are neither a JPEG nor a PNG. */
export function sniffMediaType(bytes: Uint8Array): MediaContentType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= PNG_SIGNATURE.length && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return 'image/png';
  return undefined;
}

const EXTENSIONS: Record<MediaContentType, string> = { 'image/jpeg': '.jpg', 'image/png': '.png' };

/**
 * The file name to keep and to offer in `Content-Disposition`: the tracker's, reduced to a plain
 * name (no path, no quotes or control characters, at most 100 characters), with the extension of
 * what the bytes are; `photo` when nothing of it is left.
 */
export function mediaFileName(sent: string | undefined, type: MediaContentType): string {
  const base = (sent ?? '').split(/[\\/]/).pop() ?? '';
  const stem = base.replace(/\.[A-Za-z0-9]{1,5}$/, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 100);
  return `${stem || 'photo'}${EXTENSIONS[type]}`;
}

/** Why a file cannot be kept, or undefined when it can: too large, empty, or not an image we serve. */
export function unstorableMedia(bytes: Uint8Array, maxBytes: number): string | undefined {
  if (bytes.length === 0) return 'the file is empty';
  if (bytes.length > maxBytes) return `the file is ${bytes.length} bytes, over MEDIA_MAX_BYTES (${maxBytes})`;
  if (!sniffMediaType(bytes)) return 'the bytes are neither a JPEG nor a PNG';
  return undefined;
}
