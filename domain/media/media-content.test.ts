import { describe, expect, it } from 'vitest';
import { mediaFileName, sniffMediaType, unstorableMedia } from './media-content.ts';

const jpeg = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0x10);
const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0);

describe('media content', () => {
  it('reads the type from the bytes, never the name', () => {
    expect(sniffMediaType(jpeg)).toBe('image/jpeg');
    expect(sniffMediaType(png)).toBe('image/png');
    expect(sniffMediaType(new TextEncoder().encode('<html><script>alert(1)</script>'))).toBeUndefined();
    expect(sniffMediaType(Uint8Array.of(0xff, 0xd8))).toBeUndefined();
  });

  it('refuses what is empty, too large or not an image', () => {
    expect(unstorableMedia(jpeg, 100)).toBeUndefined();
    expect(unstorableMedia(new Uint8Array(0), 100)).toBe('the file is empty');
    expect(unstorableMedia(jpeg, 5)).toMatch(/over MEDIA_MAX_BYTES \(5\)/);
    expect(unstorableMedia(Uint8Array.of(1, 2, 3), 100)).toMatch(/neither a JPEG nor a PNG/);
  });

  it('keeps a plain file name with the extension of what the bytes are', () => {
    expect(mediaFileName('camera_picture.jpg', 'image/jpeg')).toBe('camera_picture.jpg');
    expect(mediaFileName('shot.html', 'image/png')).toBe('shot.png');
    expect(mediaFileName('../../etc/"x";\r\n.jpg', 'image/jpeg')).toBe('x_.jpg');
    expect(mediaFileName(undefined, 'image/jpeg')).toBe('photo.jpg');
    expect(mediaFileName('...', 'image/jpeg')).toBe('photo.jpg');
  });
});
