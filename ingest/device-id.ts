/**
 * What a device identifier can be, whatever the protocol: the form a device can be registered with
 * (`fleet device add`, POST /vehicles), 1 to 32 letters, digits, dots, dashes or underscores. An id
 * outside it can name no device, so a frame carrying one is malformed and is not looked up.
 */
export const DEVICE_ID = /^[0-9A-Za-z._-]{1,32}$/;

export const MAX_DEVICE_ID_LENGTH = 32;
