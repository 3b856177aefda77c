import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { NotFound } from './not-found';

describe('NotFound', () => {
  it('names the unknown URL and links home', async () => {
    TestBed.configureTestingModule({
      imports: [NotFound],
      providers: [provideRouter([{ path: '**', component: NotFound }])],
    });
    await TestBed.inject(Router).navigateByUrl('/no/such/page');
    const fixture = TestBed.createComponent(NotFound);
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    expect(root.querySelector('h1')?.textContent).toBe('Page not found');
    expect(root.querySelector('code')?.textContent).toBe('/no/such/page');
    expect(root.querySelector('a')?.getAttribute('href')).toBe('/');
  });
});
