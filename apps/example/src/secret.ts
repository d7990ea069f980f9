import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether `given` is `secret`: hashes of equal length compared in constant time, so the answer's timing says nothing of it. */
export const sameSecret = (given: string, secret: string): boolean => timingSafeEqual(digest(given), digest(secret));
