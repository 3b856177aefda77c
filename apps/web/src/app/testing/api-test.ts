import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import type { Type } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import { EventStream } from '../core/event-stream';
import { FakeEventStream } from './fake-event-stream';

/**
 * For specs of a component that talks to the API and follows the server's events: configures the
 * TestBed with the testing HTTP backend, a router and a `FakeEventStream`. Call it in `beforeEach`.
 */
export function setUpApiTest(component: Type<unknown>): {
  http: HttpTestingController;
  events: FakeEventStream;
} {
  const events = new FakeEventStream();
  TestBed.configureTestingModule({
    imports: [component],
    providers: [
      provideHttpClient(),
      provideHttpClientTesting(),
      provideRouter([]),
      { provide: EventStream, useValue: events },
    ],
  });
  return { http: TestBed.inject(HttpTestingController), events };
}

/** The `afterEach` of `setUpApiTest`: no request is left unanswered, and no snack bar outlives its test. */
export function tearDownApiTest(http: HttpTestingController): void {
  http.verify();
  document
    .querySelectorAll('.cdk-overlay-container')
    .forEach((node) => (node.innerHTML = ''));
}

/** Looks up elements by `data-testid` below `root()` (or a given scope); texts come with their white space folded. */
export function testIdQueries(root: () => ParentNode) {
  const el = <T extends HTMLElement = HTMLElement>(
    testId: string,
    scope: ParentNode = root(),
  ) => scope.querySelector<T>(`[data-testid="${testId}"]`);
  const all = (testId: string, scope: ParentNode = root()) =>
    Array.from(
      scope.querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`),
    );
  const folded = (node: Node | null | undefined) =>
    node?.textContent?.replace(/\s+/g, ' ').trim();
  const text = (testId: string, scope: ParentNode = root()) =>
    folded(el(testId, scope));
  const texts = (testId: string, scope: ParentNode = root()) =>
    all(testId, scope).map(folded);
  return { el, all, text, texts };
}
